"""Attention for padding-free packed rows: causal SDPA run per example.

A packed row holds several examples whose ``position_ids`` restart at 0. Masking the whole
row with a block-diagonal matrix costs attention over the full row length (and forces SDPA
off its fused causal path); running each example's slice separately costs only what the
examples need, like flash-attention's varlen kernels do. Anything else (a KV cache, padding
masks, several rows) goes to the standard SDPA path."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from transformers import AttentionInterface, PreTrainedModel
from transformers.integrations.sdpa_attention import sdpa_attention_forward

PACKED_SDPA = "skillgym_packed_sdpa"


def segment_bounds(position_ids: torch.Tensor) -> list[tuple[int, int]]:
    starts = (position_ids == 0).nonzero().flatten().tolist()
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    ends = [*starts[1:], int(position_ids.shape[-1])]
    return list(zip(starts, ends, strict=True))


def packed_sdpa_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    position_ids = kwargs.get("position_ids")
    packed = (
        attention_mask is None and position_ids is not None and query.shape[0] == 1 and query.shape[2] == key.shape[2]
    )
    if not packed:
        output, _ = sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling, **kwargs)
        return output, None
    assert position_ids is not None
    gqa = query.shape[1] != key.shape[1]
    parts = [
        F.scaled_dot_product_attention(
            query[:, :, start:end],
            key[:, :, start:end],
            value[:, :, start:end],
            dropout_p=dropout if module.training else 0.0,
            is_causal=True,
            scale=scaling,
            enable_gqa=gqa,
        )
        for start, end in segment_bounds(position_ids[0])
    ]
    return torch.cat(parts, dim=2).transpose(1, 2).contiguous(), None


AttentionInterface.register(PACKED_SDPA, packed_sdpa_forward)


@contextmanager
def packed_attention(model: PreTrainedModel) -> Iterator[None]:
    """Use per-example attention while training; the saved model keeps its own setting."""
    configs = [model.config, *(getattr(model.config, name) for name in model.config.sub_configs)]
    before = [config._attn_implementation for config in configs]
    for config in configs:
        config._attn_implementation = PACKED_SDPA
    try:
        yield
    finally:
        for config, value in zip(configs, before, strict=True):
            config._attn_implementation = value
