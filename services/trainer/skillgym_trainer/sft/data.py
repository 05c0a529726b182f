"""Tokenise chat examples with assistant-only labels and pack them padding-free.

A packed batch is one row holding several examples back to back; ``position_ids`` restart
at 0 for every example, which transformers turns into a block-diagonal causal mask (no
attention across examples) when no ``attention_mask`` is given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

from skillgym_trainer.errors import DatasetError

IGNORE_INDEX = -100


@dataclass(frozen=True)
class TokenizedExample:
    input_ids: list[int]
    labels: list[int]

    @property
    def trainable_tokens(self) -> int:
        return sum(1 for label in self.labels if label != IGNORE_INDEX)

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass(frozen=True)
class PackedBatch:
    input_ids: torch.Tensor  # [1, T]
    position_ids: torch.Tensor  # [1, T]
    labels: torch.Tensor  # [1, T]
    boundaries: tuple[int, ...]  # start offset of every example in the row

    @property
    def tokens(self) -> int:
        return int(self.input_ids.shape[1])

    @property
    def trainable_tokens(self) -> int:
        # The model shifts labels left by one; the first label is never predicted.
        return int((self.labels[:, 1:] != IGNORE_INDEX).sum())


def tokenize_example(example: dict[str, Any], tokenizer: PreTrainedTokenizerBase, max_tokens: int) -> TokenizedExample:
    """Render with the chat template; labels keep assistant tokens only; cut at ``max_tokens``."""
    rendered = tokenizer.apply_chat_template(
        example["messages"],
        tools=example.get("tools") or None,
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    encoded: Any = rendered
    ids: list[int] = list(encoded["input_ids"])[:max_tokens]
    mask: list[int] = list(encoded["assistant_masks"])[:max_tokens]
    labels = [token if keep else IGNORE_INDEX for token, keep in zip(ids, mask, strict=True)]
    return TokenizedExample(ids, labels)


def tokenize_all(
    examples: Sequence[dict[str, Any]], tokenizer: PreTrainedTokenizerBase, max_tokens: int
) -> list[TokenizedExample]:
    out = [tokenize_example(example, tokenizer, max_tokens) for example in examples]
    kept = [item for item in out if item.trainable_tokens > 0]
    if not kept:
        raise DatasetError("no example has an assistant token to learn from", examples=len(examples))
    return kept


def pack(examples: Sequence[TokenizedExample], tokens_per_batch: int) -> list[PackedBatch]:
    """First-fit-decreasing into rows of at most ``tokens_per_batch`` tokens (longer examples
    are cut to fit). Order of batches is deterministic."""
    bins: list[list[TokenizedExample]] = []
    loads: list[int] = []
    for example in sorted(examples, key=len, reverse=True):
        size = min(len(example), tokens_per_batch)
        for index, load in enumerate(loads):
            if load + size <= tokens_per_batch:
                bins[index].append(example)
                loads[index] += size
                break
        else:
            bins.append([example])
            loads.append(size)
    rows = [_row(group, tokens_per_batch) for group in bins]
    return [row for row in rows if row.trainable_tokens > 0]  # cut rows with nothing to learn teach nothing


def _row(group: Sequence[TokenizedExample], limit: int) -> PackedBatch:
    ids: list[int] = []
    positions: list[int] = []
    labels: list[int] = []
    boundaries: list[int] = []
    for example in group:
        size = min(len(example), limit)
        boundaries.append(len(ids))
        ids.extend(example.input_ids[:size])
        positions.extend(range(size))
        cut = example.labels[:size]
        labels.extend([IGNORE_INDEX, *cut[1:]])
    return PackedBatch(
        input_ids=torch.tensor([ids], dtype=torch.long),
        position_ids=torch.tensor([positions], dtype=torch.long),
        labels=torch.tensor([labels], dtype=torch.long),
        boundaries=tuple(boundaries),
    )
