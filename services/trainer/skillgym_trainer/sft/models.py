"""The student: a tiny random Llama for fast runs, or a pretrained model from a directory
(a GGUF file inside it is dequantised by transformers)."""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from skillgym_trainer.errors import TrainingError
from skillgym_trainer.sft.chat_template import CHAT_TEMPLATE, SPECIAL_TOKENS


def tiny_llama(
    vocab_size: int, *, hidden: int = 64, layers: int = 2, heads: int = 4, seed: int = 0
) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
    )
    config._attn_implementation = "sdpa"
    return LlamaForCausalLM(config)


def load_pretrained(
    model_dir: str | Path, gguf_file: str | None = None, dtype: torch.dtype = torch.float32
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load model and tokenizer; install our chat template and special tokens if missing."""
    path = Path(model_dir)
    if not path.is_dir():
        raise TrainingError(f"base model directory {path} does not exist", model_dir=str(path))
    if gguf_file is None:
        ggufs = sorted(path.glob("*.gguf"))
        gguf_file = ggufs[0].name if ggufs and not (path / "config.json").exists() else None
    kwargs = {"gguf_file": gguf_file} if gguf_file else {}
    tokenizer = AutoTokenizer.from_pretrained(str(path), **kwargs)
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, **kwargs)
    missing = [token for token in SPECIAL_TOKENS[:2] if token not in tokenizer.get_vocab()]
    if missing:
        tokenizer.add_special_tokens({"additional_special_tokens": missing})
        model.resize_token_embeddings(len(tokenizer))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.eos_token = "<|im_end|>"
    # A GGUF checkpoint is dequantised on load; drop the quantiser so the result saves as plain weights.
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer = None  # type: ignore[assignment]
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    return model, tokenizer
