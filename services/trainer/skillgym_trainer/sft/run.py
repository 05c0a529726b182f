"""One SFT run from chat examples to a saved checkpoint directory."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from skillgym_trainer.sft.data import pack, tokenize_all
from skillgym_trainer.sft.loop import SFTConfig, TrainResult, train
from skillgym_trainer.sft.models import load_pretrained, tiny_llama
from skillgym_trainer.sft.tokenizer import cached_tokenizer


@dataclass(frozen=True)
class RunSpec:
    base_model: str = "tiny"
    gguf_file: str | None = None
    tokens_per_batch: int = 1024
    max_example_tokens: int = 4096
    sft: SFTConfig = field(default_factory=SFTConfig)


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
    spec: RunSpec, examples: Sequence[dict[str, Any]], cache_dir: Path
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    if spec.base_model == "tiny":
        tokenizer = cached_tokenizer(corpus_texts(examples), cache_dir)
        return tiny_llama(len(tokenizer), seed=spec.sft.seed), tokenizer
    return load_pretrained(spec.base_model, spec.gguf_file)


def run_sft(
    train_examples: Sequence[dict[str, Any]],
    spec: RunSpec,
    out_dir: Path,
    cache_dir: Path,
    eval_examples: Sequence[dict[str, Any]] = (),
) -> TrainResult:
    """Train and save ``save_pretrained`` files plus ``metrics.json`` into ``out_dir``."""
    model, tokenizer = load_student(spec, [*train_examples, *eval_examples], cache_dir)
    batches = pack(tokenize_all(train_examples, tokenizer, spec.max_example_tokens), spec.tokens_per_batch)
    eval_batches = (
        pack(tokenize_all(eval_examples, tokenizer, spec.max_example_tokens), spec.tokens_per_batch)
        if eval_examples
        else []
    )
    result = train(model, batches, spec.sft, eval_batches=eval_batches)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.config.use_cache = True
    model.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    (out_dir / "metrics.json").write_text(json.dumps(result.to_dict(), indent=2))
    return result
