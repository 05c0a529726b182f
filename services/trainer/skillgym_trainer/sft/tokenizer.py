"""A small byte-level BPE tokenizer trained on the training texts (for the tiny student)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from skillgym_core.ids import sha256_hex
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from skillgym_trainer.sft.chat_template import CHAT_TEMPLATE, IM_END, SPECIAL_TOKENS

TEMPLATE_TEXT = (
    'system\n# Tools\n<tools>\n</tools>\nCall a tool with <tool_call>{"name": ..., "arguments": {...}}'
    "</tool_call>.\nuser\nassistant\ntool\n<think>\n</think>\n"
)


def train_tokenizer(texts: Iterable[str], vocab_size: int = 512) -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([TEMPLATE_TEXT, *texts], trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=IM_END,
        pad_token="<pad>",
        bos_token=None,
        unk_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def cached_tokenizer(texts: list[str], cache_dir: Path, vocab_size: int = 512) -> PreTrainedTokenizerFast:
    """Train once per distinct corpus; later calls load the saved tokenizer."""
    digest = sha256_hex("\0".join([str(vocab_size), *texts]).encode())[:16]
    path = Path(cache_dir) / f"tokenizer-{digest}"
    if (path / "tokenizer.json").is_file():
        loaded = PreTrainedTokenizerFast.from_pretrained(str(path))
        loaded.chat_template = CHAT_TEMPLATE
        return loaded
    fast = train_tokenizer(texts, vocab_size)
    fast.save_pretrained(str(path))
    return fast
