"""Optimiser back ends: plain PyTorch AdamW, or a DeepSpeed ZeRO engine."""

from __future__ import annotations

from typing import Any, Protocol

import torch


class Engine(Protocol):
    @property
    def model(self) -> torch.nn.Module: ...

    def forward_module(self) -> torch.nn.Module:
        """What the loop calls for forward passes (the DeepSpeed engine wraps the model)."""
        ...

    def set_learning_rate(self, lr: float) -> None: ...

    def backward(self, loss: torch.Tensor) -> None: ...

    def step(self, max_grad_norm: float) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class PlainEngine:
    def __init__(self, model: torch.nn.Module, lr: float, weight_decay: float = 0.0) -> None:
        self.model = model
        params = [param for param in model.parameters() if param.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))

    def forward_module(self) -> torch.nn.Module:
        return self.model

    def set_learning_rate(self, lr: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def step(self, max_grad_norm: float) -> None:
        if max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.requires_grad], max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
