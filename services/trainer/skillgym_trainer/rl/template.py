"""The policy model and a tokenizer that TRL can render tools with and parse tool calls from.

Both templates are ChatML with Hermes-style ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
blocks, the format SmolLM2's ``<|im_start|>``/``<|im_end|>`` tokens fit:

- ``qwen2_5``: TRL's Qwen2.5 template, whose tool-call parser ``add_response_schema`` knows;
- ``skillgym``: the template the SFT trainer and ``serve-model`` use, so a policy fine-tuned on
  the project's trajectories keeps its format; TRL does not recognise it by text, so its parser
  (the same block format) is set by hand."""

from __future__ import annotations

from typing import Literal

from transformers import PreTrainedModel, PreTrainedTokenizerBase
from trl.chat_template_utils import (
    _SUPPORTS_RESPONSE_TEMPLATE,
    add_response_schema,
    qwen2_5_chat_template,
    qwen3_schema,
    qwen3_template,
    supports_tool_calling,
)

from skillgym_trainer.commands import resolve_base_model
from skillgym_trainer.errors import TrainingError
from skillgym_trainer.sft.chat_template import CHAT_TEMPLATE
from skillgym_trainer.sft.models import load_pretrained

ChatTemplateName = Literal["qwen2_5", "skillgym"]


def use_tool_template(tokenizer: PreTrainedTokenizerBase, name: ChatTemplateName) -> PreTrainedTokenizerBase:
    if name == "qwen2_5":
        tokenizer.chat_template = qwen2_5_chat_template
        add_response_schema(tokenizer)
    else:
        tokenizer.chat_template = CHAT_TEMPLATE
        if _SUPPORTS_RESPONSE_TEMPLATE:
            tokenizer.response_template = qwen3_template
        else:
            tokenizer.response_schema = qwen3_schema
    if not supports_tool_calling(tokenizer):
        raise TrainingError(f"the {name} chat template cannot render a tool-calling conversation",
                            reason="chat_template_without_tools")  # fmt: skip
    return tokenizer


def load_policy(base_model: str, template: ChatTemplateName) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """The base model in float32 (CPU training), its tokenizer with the tool template, and its folder."""
    model_dir, gguf_file = resolve_base_model(base_model)
    if model_dir == "tiny":
        raise TrainingError("GRPO needs a pretrained chat model: smollm2 or a model folder",
                            reason="base_model_not_pretrained")  # fmt: skip
    model, tokenizer = load_pretrained(model_dir, gguf_file)
    return model, use_tool_template(tokenizer, template), model_dir
