"""Masking, packing boundaries and the chat template, on a tiny random model."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import torch
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.sft.attention import packed_attention
from skillgym_trainer.sft.chat_template import parse_assistant_text
from skillgym_trainer.sft.data import IGNORE_INDEX, pack, tokenize_all, tokenize_example
from skillgym_trainer.sft.models import tiny_llama
from skillgym_trainer.sft.run import corpus_texts
from skillgym_trainer.sft.tokenizer import cached_tokenizer, train_tokenizer

from tests.trainer.factories import make_trajectory

EXAMPLES = [atif_to_chat(make_trajectory(i, turns=1 + i % 3)) for i in range(6)]
TOKENIZER = train_tokenizer(corpus_texts(EXAMPLES))


def _assistant_bodies(example: dict) -> list[str]:
    """What the template renders for each trainable assistant turn."""
    bodies = []
    for message in example["messages"]:
        if message["role"] != "assistant" or message.get("weight", 1) == 0:
            continue
        rendered = str(TOKENIZER.apply_chat_template([message], tokenize=False))
        bodies.append(rendered.split("<|im_start|>assistant\n", 1)[1].rstrip("\n"))
    return bodies


def test_labels_cover_exactly_the_assistant_turns() -> None:
    example = EXAMPLES[2]
    tokenized = tokenize_example(example, TOKENIZER, 10_000)
    kept = [token for token in tokenized.labels if token != IGNORE_INDEX]
    assert TOKENIZER.decode(kept) == "".join(_assistant_bodies(example))
    assert "<|im_start|>" not in TOKENIZER.decode(kept)
    assert "ok: " not in TOKENIZER.decode(kept)  # tool output is never learned


def test_copied_context_turns_are_not_learned() -> None:
    example = json.loads(json.dumps(EXAMPLES[1]))
    example["messages"][2]["weight"] = 0
    full = tokenize_example(EXAMPLES[1], TOKENIZER, 10_000)
    masked = tokenize_example(example, TOKENIZER, 10_000)
    assert full.input_ids == masked.input_ids
    assert masked.trainable_tokens < full.trainable_tokens


def test_template_round_trip_through_the_parser() -> None:
    for example in EXAMPLES:
        for message in example["messages"]:
            if message["role"] != "assistant":
                continue
            body = str(TOKENIZER.apply_chat_template([message], tokenize=False)).split("assistant\n", 1)[1]
            parsed = parse_assistant_text(body)
            assert parsed["content"] == message["content"]
            assert parsed.get("reasoning_content") == message.get("reasoning_content")
            want = [
                (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls", [])
            ]
            got = [
                (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in parsed.get("tool_calls", [])
            ]
            assert got == want


def test_parser_keeps_malformed_calls_as_text() -> None:
    parsed = parse_assistant_text('hi\n<tool_call>\n{"name": broken\n</tool_call><|im_end|>')
    assert "tool_calls" not in parsed and "broken" in parsed["content"]


def test_packing_is_padding_free_and_restarts_positions() -> None:
    tokenized = tokenize_all(EXAMPLES, TOKENIZER, 10_000)
    budget = max(len(t) for t in tokenized) + min(len(t) for t in tokenized)
    batches = pack(tokenized, budget)
    assert sum(b.tokens for b in batches) == sum(len(t) for t in tokenized)
    assert any(len(b.boundaries) > 1 for b in batches)
    for batch in batches:
        assert batch.tokens <= budget
        positions = batch.position_ids[0].tolist()
        assert [i for i, p in enumerate(positions) if p == 0] == list(batch.boundaries)
        for start in batch.boundaries:
            assert batch.labels[0, start] == IGNORE_INDEX


def test_a_row_cut_before_any_assistant_token_is_not_trained_on() -> None:
    tokenized = tokenize_all(EXAMPLES, TOKENIZER, 10_000)
    first_assistant = min(next(i for i, label in enumerate(t.labels) if label != IGNORE_INDEX) for t in tokenized)
    assert pack(tokenized, first_assistant) == []  # every row would end before its first assistant token
    assert pack(tokenized, first_assistant + 8), "rows that reach an assistant token are kept"


@pytest.mark.parametrize("per_example_attention", [False, True])
def test_packed_forward_has_no_cross_example_attention(per_example_attention: bool) -> None:
    model = tiny_llama(len(TOKENIZER), seed=1).eval()
    tokenized = tokenize_all(EXAMPLES[:3], TOKENIZER, 10_000)
    (batch,) = pack(tokenized, sum(len(t) for t in tokenized))
    context = packed_attention(model) if per_example_attention else contextlib.nullcontext()
    with torch.no_grad(), context:
        packed = model(input_ids=batch.input_ids, position_ids=batch.position_ids, use_cache=False).logits[0]
        ends = [*batch.boundaries[1:], batch.tokens]
        for start, end in zip(batch.boundaries, ends, strict=True):
            alone = model(input_ids=batch.input_ids[:, start:end], use_cache=False).logits[0]
            assert model.config._attn_implementation == ("skillgym_packed_sdpa" if per_example_attention else "sdpa")
            torch.testing.assert_close(packed[start:end], alone, atol=1e-5, rtol=1e-4)


def test_tokenizer_cache_reuses_the_trained_files(tmp_path: Path) -> None:
    texts = corpus_texts(EXAMPLES)
    first = cached_tokenizer(texts, tmp_path)
    second = cached_tokenizer(texts, tmp_path)
    assert first.get_vocab() == second.get_vocab()
    assert len(list(tmp_path.iterdir())) == 1
