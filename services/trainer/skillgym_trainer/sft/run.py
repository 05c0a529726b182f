"""One SFT run from chat examples to a saved model directory: student loading (tiny or
pretrained, optional LoRA), tokenisation and packing, the chosen engine (plain or DeepSpeed
ZeRO-2/3), periodic checkpoints and resume."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from skillgym_trainer.errors import TrainingError
from skillgym_trainer.sft import checkpoint as ckpt
from skillgym_trainer.sft.data import pack, tokenize_all
from skillgym_trainer.sft.engines import Engine, PlainEngine
from skillgym_trainer.sft.loop import SFTConfig, StepRecord, TrainResult, train
from skillgym_trainer.sft.models import load_pretrained, tiny_llama
from skillgym_trainer.sft.tokenizer import cached_tokenizer

EngineName = Literal["plain", "zero2", "zero3"]


@dataclass(frozen=True)
class LoraSpec:
    r: int = 8
    alpha: int = 16
    dropout: float = 0.0
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")


@dataclass(frozen=True)
class RunSpec:
    base_model: str = "tiny"
    gguf_file: str | None = None
    tokens_per_batch: int = 1024
    max_example_tokens: int = 4096
    sft: SFTConfig = field(default_factory=SFTConfig)
    engine: EngineName = "plain"
    deepspeed_config: dict[str, Any] | None = None
    lora: LoraSpec | None = None
    bf16: bool = False
    checkpoint_every: int = 0
    keep_checkpoints: int = 2
    resume: bool = False


def corpus_texts(examples: Sequence[dict[str, Any]]) -> list[str]:
    texts: list[str] = []
    for example in examples:
        for message in example["messages"]:
            texts.append(str(message.get("content") or ""))
            texts.append(str(message.get("reasoning_content") or ""))
            for call in message.get("tool_calls") or []:
                texts.append(call["function"]["name"] + " " + call["function"]["arguments"])
        texts.extend(json.dumps(tool) for tool in example.get("tools") or [])
    return [text for text in texts if text]


def load_student(
    spec: RunSpec, examples: Sequence[dict[str, Any]], cache_dir: Path, resume_dir: Path | None = None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    if resume_dir is not None and spec.lora is None and spec.engine == "plain":
        return load_pretrained(resume_dir)
    if spec.base_model == "tiny":
        tokenizer: PreTrainedTokenizerBase = cached_tokenizer(corpus_texts(examples), cache_dir)
        model: PreTrainedModel = tiny_llama(len(tokenizer), seed=spec.sft.seed)
    else:
        model, tokenizer = load_pretrained(spec.base_model, spec.gguf_file)
    if spec.lora is not None:
        from peft import LoraConfig, PeftModel, get_peft_model

        if resume_dir is not None:
            model = PeftModel.from_pretrained(model, str(resume_dir), is_trainable=True)  # type: ignore[assignment]
        else:
            lora = LoraConfig(
                r=spec.lora.r,
                lora_alpha=spec.lora.alpha,
                lora_dropout=spec.lora.dropout,
                target_modules=list(spec.lora.target_modules),
                task_type="CAUSAL_LM",
            )
            model = get_peft_model(model, lora)  # type: ignore[assignment]
    return model, tokenizer


def make_engine(spec: RunSpec, model: PreTrainedModel) -> Engine:
    if spec.engine == "plain":
        return PlainEngine(model, spec.sft.learning_rate, spec.sft.weight_decay)
    from skillgym_trainer.sft.deepspeed_engine import DeepSpeedEngine, build_config

    stage = spec.deepspeed_config or (2 if spec.engine == "zero2" else 3)
    world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    config = build_config(
        stage,
        micro_batches=spec.sft.micro_batches_per_step,
        max_grad_norm=spec.sft.max_grad_norm,
        bf16=spec.bf16,
        world_size=world,
    )
    return DeepSpeedEngine(model, spec.sft.learning_rate, config, spec.sft.weight_decay)


def run_sft(
    train_examples: Sequence[dict[str, Any]],
    spec: RunSpec,
    out_dir: Path,
    cache_dir: Path,
    eval_examples: Sequence[dict[str, Any]] = (),
    on_checkpoint: Callable[[Path], None] | None = None,
    rank: int = 0,
    world_size: int = 1,
) -> TrainResult:
    """Train and write ``save_pretrained`` files plus ``metrics.json`` into ``out_dir``;
    checkpoints go to ``out_dir/checkpoints/step-N`` (and ``on_checkpoint``)."""
    checkpoints = out_dir / "checkpoints"
    resume = ckpt.latest_checkpoint(checkpoints) if spec.resume else None
    model, tokenizer = load_student(spec, [*train_examples, *eval_examples], cache_dir, resume[0] if resume else None)
    if torch.cuda.is_available():
        model.to("cuda")  # type: ignore[arg-type]
    # an example is cut to a packed row: one whose assistant tokens all lie past the cut teaches nothing
    max_tokens = min(spec.max_example_tokens, spec.tokens_per_batch)
    batches = pack(tokenize_all(train_examples, tokenizer, max_tokens), spec.tokens_per_batch)
    batches = batches[rank::world_size] or batches[:1]
    eval_batches = (
        pack(tokenize_all(eval_examples, tokenizer, max_tokens), spec.tokens_per_batch)
        if eval_examples
        else []
    )
    if spec.sft.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if spec.lora is not None:
            model.enable_input_require_grads()
    engine = make_engine(spec, model)
    start_step, history = 0, []
    if resume is not None:
        ckpt.restore_engine(engine, resume[0])
        start_step = resume[1]
        history = ckpt.read_state(resume[0])["loss_curve"]
    curve: list[dict[str, Any]] = list(history)

    def on_step(record: StepRecord) -> None:
        curve.append({"step": record.step, "loss": record.loss, "tokens": record.tokens, "seconds": record.seconds})
        if spec.checkpoint_every and record.step % spec.checkpoint_every == 0 and record.step < spec.sft.max_steps:
            saved = ckpt.save_checkpoint(engine, model, tokenizer, checkpoints, record.step, curve)
            ckpt.prune(checkpoints, spec.keep_checkpoints)
            if on_checkpoint is not None and rank == 0:
                on_checkpoint(saved)

    if start_step >= spec.sft.max_steps:
        raise TrainingError("checkpoint is already at max_steps", step=start_step, max_steps=spec.sft.max_steps)
    result = train(
        model, batches, spec.sft, eval_batches=eval_batches, engine=engine, start_step=start_step, on_step=on_step
    )
    result.history = history
    final = model.merge_and_unload() if spec.lora is not None else model  # type: ignore[operator]
    ckpt.export_model(engine, final, tokenizer, out_dir)
    if rank == 0:
        (out_dir / "metrics.json").write_text(json.dumps(result.to_dict(), indent=2))
    return result
