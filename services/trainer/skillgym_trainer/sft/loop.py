"""The SFT loop: padding-free packed batches, assistant-only loss, warm-up + decay schedule,
gradient clipping, optional gradient checkpointing, metrics and a progress bar.

The optimiser step is delegated to an :class:`~skillgym_trainer.sft.engines.Engine` so the
same loop runs plain PyTorch or DeepSpeed ZeRO."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

import torch
from skillgym_core import metrics
from tqdm import tqdm
from transformers import PreTrainedModel

from skillgym_trainer.errors import TrainingError
from skillgym_trainer.sft.attention import packed_attention
from skillgym_trainer.sft.data import PackedBatch
from skillgym_trainer.sft.engines import Engine, PlainEngine


@dataclass(frozen=True)
class SFTConfig:
    max_steps: int = 8
    learning_rate: float = 3e-3
    warmup_ratio: float = 0.1
    schedule: Literal["cosine", "linear", "constant"] = "cosine"
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    micro_batches_per_step: int = 1
    gradient_checkpointing: bool = False
    seed: int = 0
    run_id: str = "local"
    progress: bool = False


@dataclass
class StepRecord:
    step: int
    loss: float
    learning_rate: float
    tokens: int
    trainable_tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


@dataclass
class TrainResult:
    steps: list[StepRecord] = field(default_factory=list)
    eval_loss_before: float | None = None
    eval_loss_after: float | None = None
    history: list[dict[str, object]] = field(default_factory=list)  # steps before a resume

    @property
    def loss_first(self) -> float:
        return self.steps[0].loss

    @property
    def loss_last(self) -> float:
        return self.steps[-1].loss

    @property
    def tokens(self) -> int:
        return sum(step.tokens for step in self.steps)

    @property
    def seconds(self) -> float:
        return sum(step.seconds for step in self.steps)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "loss_curve": [asdict(step) | {"tokens_per_second": step.tokens_per_second} for step in self.steps],
            "resumed_from": self.history,
            "loss_first": self.loss_first,
            "loss_last": self.loss_last,
            "eval_loss_before": self.eval_loss_before,
            "eval_loss_after": self.eval_loss_after,
            "tokens": self.tokens,
            "seconds": self.seconds,
            "tokens_per_second": self.tokens_per_second,
        }


def lr_factor(step: int, total: int, warmup_ratio: float, schedule: str) -> float:
    """Multiplier of the peak learning rate at 0-based ``step``."""
    warmup = math.ceil(total * warmup_ratio)
    if step < warmup:
        return (step + 1) / (warmup + 1)
    if schedule == "constant":
        return 1.0
    progress = (step - warmup) / max(1, total - warmup)
    if schedule == "linear":
        return max(0.0, 1.0 - progress)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def forward_loss(model: torch.nn.Module, batch: PackedBatch, num_items: int) -> torch.Tensor:
    """Sum of token losses of ``batch`` divided by ``num_items`` (the step's trainable tokens)."""
    device = next(model.parameters()).device
    output = model(
        input_ids=batch.input_ids.to(device),
        position_ids=batch.position_ids.to(device),
        labels=batch.labels.to(device),
        num_items_in_batch=num_items,
        use_cache=False,
    )
    return output.loss


@torch.no_grad()
def evaluate(model: torch.nn.Module, batches: Sequence[PackedBatch]) -> float:
    """Mean loss per assistant token over ``batches``."""
    was_training = model.training
    model.eval()
    total = sum(batch.trainable_tokens for batch in batches)
    if total == 0:
        raise TrainingError("evaluation set has no assistant tokens")
    loss = sum(float(forward_loss(model, batch, total)) for batch in batches)
    model.train(was_training)
    return loss


def train(
    model: PreTrainedModel,
    batches: Sequence[PackedBatch],
    config: SFTConfig,
    *,
    eval_batches: Sequence[PackedBatch] = (),
    engine: Engine | None = None,
    start_step: int = 0,
    on_step: Callable[[StepRecord], None] | None = None,
) -> TrainResult:
    """Run ``config.max_steps`` optimiser steps (from ``start_step`` when resuming), cycling
    through ``batches`` in order."""
    if not batches:
        raise TrainingError("nothing to train on: no packed batches")
    torch.manual_seed(config.seed)
    if config.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    engine = engine or PlainEngine(model, config.learning_rate, config.weight_decay)
    with packed_attention(model):
        return _train_steps(model, batches, config, eval_batches, engine, start_step, on_step)


def _train_steps(
    model: PreTrainedModel,
    batches: Sequence[PackedBatch],
    config: SFTConfig,
    eval_batches: Sequence[PackedBatch],
    engine: Engine,
    start_step: int,
    on_step: Callable[[StepRecord], None] | None,
) -> TrainResult:
    result = TrainResult()
    if eval_batches:
        result.eval_loss_before = evaluate(engine.forward_module(), eval_batches)
    engine.model.train()
    per_step = config.micro_batches_per_step
    bar = tqdm(total=config.max_steps, initial=start_step, disable=not config.progress, desc="sft", unit="step")
    for step in range(start_step, config.max_steps):
        lr = config.learning_rate * lr_factor(step, config.max_steps, config.warmup_ratio, config.schedule)
        engine.set_learning_rate(lr)
        micro = [batches[(step * per_step + index) % len(batches)] for index in range(per_step)]
        num_items = max(1, sum(batch.trainable_tokens for batch in micro))
        started = time.perf_counter()
        step_loss = 0.0
        for batch in micro:
            loss = forward_loss(engine.forward_module(), batch, num_items)
            engine.backward(loss)
            step_loss += float(loss.detach())
        engine.step(config.max_grad_norm)
        record = StepRecord(
            step=step + 1,
            loss=step_loss,
            learning_rate=lr,
            tokens=sum(batch.tokens for batch in micro),
            trainable_tokens=num_items,
            seconds=time.perf_counter() - started,
        )
        result.steps.append(record)
        metrics.TRAIN_LOSS.labels(config.run_id).set(record.loss)
        metrics.TRAIN_TOKENS_PER_SECOND.labels(config.run_id).set(record.tokens_per_second)
        metrics.TRAIN_STEPS.inc()
        bar.set_postfix(loss=f"{record.loss:.4f}", tok_s=f"{record.tokens_per_second:.0f}")
        bar.update(1)
        if on_step is not None:
            on_step(record)
    bar.close()
    if eval_batches:
        result.eval_loss_after = evaluate(engine.forward_module(), eval_batches)
    return result
