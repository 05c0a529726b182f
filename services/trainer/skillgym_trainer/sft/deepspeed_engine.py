"""DeepSpeed ZeRO-2/ZeRO-3 behind the :class:`Engine` protocol.

The optimiser is a client-side ``torch.optim.AdamW`` (no ``optimizer`` block in the config):
DeepSpeed's own optimisers need compiled ops that a CPU machine does not have. The loop
already divides each micro-batch loss by the step's token count, so backward runs with
``scale_wrt_gas=False``; ``engine.step()`` follows every backward and DeepSpeed updates at
the accumulation boundary."""

from __future__ import annotations

import copy
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import torch

from skillgym_trainer.errors import TrainingError

STAGES = (2, 3)


def load_config(stage: int) -> dict[str, Any]:
    if stage not in STAGES:
        raise TrainingError(f"unsupported ZeRO stage {stage}; choose 2 or 3", stage=stage)
    text = resources.files("skillgym_trainer.sft").joinpath(f"ds_configs/zero{stage}.json").read_text()
    config: dict[str, Any] = json.loads(text)
    return config


def build_config(
    stage_or_config: int | dict[str, Any],
    *,
    micro_batches: int,
    max_grad_norm: float,
    bf16: bool,
    world_size: int,
) -> dict[str, Any]:
    config = copy.deepcopy(stage_or_config) if isinstance(stage_or_config, dict) else load_config(stage_or_config)
    if "optimizer" in config:
        raise TrainingError("keep 'optimizer' out of the DeepSpeed config; the trainer supplies AdamW")
    config["gradient_accumulation_steps"] = micro_batches
    config["train_micro_batch_size_per_gpu"] = 1
    config["train_batch_size"] = micro_batches * world_size
    config["gradient_clipping"] = max_grad_norm
    config.setdefault("bf16", {})["enabled"] = bf16
    return config


def ensure_process_group_env() -> None:
    """Single-process defaults so DeepSpeed does not reach for MPI discovery."""
    for name, value in (
        ("MASTER_ADDR", "127.0.0.1"),
        ("MASTER_PORT", "29511"),
        ("RANK", "0"),
        ("LOCAL_RANK", "0"),
        ("WORLD_SIZE", "1"),
    ):
        os.environ.setdefault(name, value)


class DeepSpeedEngine:
    def __init__(
        self,
        model: torch.nn.Module,
        lr: float,
        config: dict[str, Any],
        weight_decay: float = 0.0,
    ) -> None:
        ensure_process_group_env()
        import deepspeed

        backend = "nccl" if torch.cuda.is_available() else "gloo"
        deepspeed.init_distributed(dist_backend=backend)
        params = [param for param in model.parameters() if param.requires_grad]
        optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))
        self.engine, self.optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
        self.stage = int(config.get("zero_optimization", {}).get("stage", 0))

    @property
    def model(self) -> torch.nn.Module:
        return self.engine.module

    def set_learning_rate(self, lr: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def backward(self, loss: torch.Tensor) -> None:
        self.engine.backward(loss, scale_wrt_gas=False)
        self.engine.step()

    def step(self, max_grad_norm: float) -> None:
        """Nothing left: DeepSpeed stepped at the accumulation boundary (clipping is in the config)."""

    def forward_module(self) -> torch.nn.Module:
        return self.engine

    def full_state_dict(self) -> dict[str, torch.Tensor] | None:
        """The whole model's weights on rank 0 (gathered under ZeRO-3); None elsewhere."""
        if self.stage == 3:
            return self.engine._zero3_consolidated_16bit_state_dict()
        return self.model.state_dict() if self.engine.global_rank == 0 else None

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        raise TrainingError("resume a DeepSpeed run with save_checkpoint/load_checkpoint directories")

    def save_checkpoint(self, directory: Path, tag: str) -> None:
        self.engine.save_checkpoint(str(directory), tag=tag)

    def load_checkpoint(self, directory: Path, tag: str) -> None:
        self.engine.load_checkpoint(str(directory), tag=tag)
