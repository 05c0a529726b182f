"""SFT throughput: our packed, padding-free loop vs TRL's SFTTrainer, same model, same data.

Both train the same initial weights with the same chat template (assistant-only loss) on the
same pipeline-shaped trajectories for the same number of optimiser steps and about the same
tokens per step. Reported: tokens/s (non-padding tokens over the wall time of training) and
the non-padding share of every batch.

    python benchmarks/train_bench.py [--model tiny|smollm2] [--steps 6] [--examples 48]
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from skillgym_core.contracts.atif import Agent, Observation, ObservationResult, Step, ToolCall, Trajectory
from skillgym_trainer.commands import resolve_base_model
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.sft.data import pack, tokenize_all
from skillgym_trainer.sft.loop import SFTConfig, train
from skillgym_trainer.sft.models import load_pretrained, tiny_llama
from skillgym_trainer.sft.run import corpus_texts
from skillgym_trainer.sft.tokenizer import train_tokenizer

RESULTS = Path(__file__).resolve().parent / "results" / "train_bench.json"
WORDS = [
    "table",
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
]
BASH = {"type": "function", "function": {"name": "bash", "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}  # fmt: skip


def trajectory(index: int) -> Trajectory:
    """Sampler-shaped: system, instruction, 1-6 tool-using turns of varied length, final answer."""
    rng = random.Random(index)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    steps = [
        Step(step_id=1, source="system", message="You are a terminal agent. Use the bash tool."),
        Step(step_id=2, source="user", message=f"Task {index}: {words(rng.randint(10, 40))}"),
    ]
    for turn in range(rng.randint(1, 6)):
        call = f"c{index}_{turn}"
        steps.append(
            Step(
                step_id=len(steps) + 1,
                source="agent",
                message=words(rng.randint(3, 30)),
                reasoning_content=words(rng.randint(5, 60)),
                tool_calls=[ToolCall(tool_call_id=call, function_name="bash", arguments={"command": words(5)})],
                observation=Observation(
                    results=[ObservationResult(source_call_id=call, content=words(rng.randint(5, 120)))]
                ),
            )
        )
    steps.append(Step(step_id=len(steps) + 1, source="agent", message=f"Done. {words(8)}"))
    return Trajectory(
        session_id=f"s{index}", agent=Agent(name="bench", version="1", tool_definitions=[BASH]), steps=steps
    )


def student(name: str, rows: list[dict[str, Any]]) -> tuple[Any, Any]:
    if name == "tiny":
        tokenizer = train_tokenizer(corpus_texts(rows), vocab_size=2048)
        return tiny_llama(len(tokenizer), hidden=256, layers=4, heads=8, seed=0), tokenizer
    model_dir, gguf = resolve_base_model(name)
    return load_pretrained(model_dir, gguf)


def run_ours(
    model: Any, tokenizer: Any, rows: list[dict[str, Any]], steps: int, tokens_per_step: int, lr: float
) -> dict[str, Any]:
    batches = pack(tokenize_all(rows, tokenizer, 100_000), tokens_per_step)
    started = time.perf_counter()
    result = train(model, batches, SFTConfig(max_steps=steps, learning_rate=lr, warmup_ratio=0.0, run_id="bench"))
    wall = time.perf_counter() - started
    used = [batches[i % len(batches)] for i in range(steps)]
    real = sum(b.tokens for b in used)
    return {
        "tokens_per_second": real / wall,
        "non_padding_share_per_batch": [1.0 for _ in used],  # rows are concatenated, never padded
        "tokens": real,
        "seconds": wall,
        "loss_first": result.loss_first,
        "loss_last": result.loss_last,
    }


def run_trl(
    model: Any, tokenizer: Any, rows: list[dict[str, Any]], steps: int, batch_size: int, lr: float, out: Path
) -> dict[str, Any]:
    from datasets import Dataset
    from trl import SFTConfig as TRLConfig
    from trl import SFTTrainer

    shares: list[float] = []
    real_tokens = [0]
    dataset = Dataset.from_list([{"messages": r["messages"], "tools": r["tools"]} for r in rows])
    config = TRLConfig(
        output_dir=str(out),
        max_steps=steps,
        per_device_train_batch_size=batch_size,
        learning_rate=lr,
        lr_scheduler_type="cosine",
        warmup_steps=0,
        assistant_only_loss=True,
        max_length=100_000,
        packing=False,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        use_cpu=not torch.cuda.is_available(),
        dataloader_num_workers=0,
        seed=0,
        disable_tqdm=True,
    )
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    collate = trainer.data_collator

    def counting(features: list[dict[str, Any]]) -> dict[str, Any]:
        batch = collate(features)
        mask = batch.get("attention_mask")
        real = int(mask.sum()) if mask is not None else int(batch["input_ids"].numel())
        real_tokens[0] += real
        shares.append(real / batch["input_ids"].numel())
        return batch

    trainer.data_collator = counting
    started = time.perf_counter()
    output = trainer.train()
    wall = time.perf_counter() - started
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    return {
        "tokens_per_second": real_tokens[0] / wall,
        "non_padding_share_per_batch": shares,
        "tokens": real_tokens[0],
        "seconds": wall,
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else output.training_loss,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--examples", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    rows = [atif_to_chat(trajectory(i)) for i in range(args.examples)]
    model, tokenizer = student(args.model, rows)
    lr = args.lr or (1e-3 if args.model == "tiny" else 2e-5)
    lengths = [len(t) for t in tokenize_all(rows, tokenizer, 100_000)]
    tokens_per_step = int(statistics.fmean(lengths) * args.batch_size)
    initial = copy.deepcopy(model.state_dict())
    ours = run_ours(model, tokenizer, rows, args.steps, tokens_per_step, lr)
    model.load_state_dict(initial)
    with tempfile.TemporaryDirectory() as scratch:
        trl = run_trl(model, tokenizer, rows, args.steps, args.batch_size, lr, Path(scratch))
    report = {
        "benchmark": "sft_throughput",
        "machine": {
            "cpus": torch.get_num_threads(),
            "cuda": torch.cuda.is_available(),
            "python": platform.python_version(),
        },
        "model": args.model,
        "examples": args.examples,
        "steps": args.steps,
        "example_tokens": {"mean": statistics.fmean(lengths), "min": min(lengths), "max": max(lengths)},
        "ours": ours,
        "trl_sfttrainer": trl,
        "tokens_per_second_ratio": ours["tokens_per_second"] / trl["tokens_per_second"],
        "non_padding_share": {
            "ours_min": min(ours["non_padding_share_per_batch"]),
            "trl_mean": statistics.fmean(trl["non_padding_share_per_batch"]),
            "trl_min": min(trl["non_padding_share_per_batch"]),
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2))
    print(json.dumps({k: report[k] for k in ("tokens_per_second_ratio", "non_padding_share")}, indent=2))
    print(f"ours {ours['tokens_per_second']:.0f} tok/s vs TRL {trl['tokens_per_second']:.0f} tok/s")


if __name__ == "__main__":
    main()
