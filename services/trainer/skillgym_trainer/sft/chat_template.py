"""The chat template used for training and serving (ChatML with ``<tool_call>`` blocks).

Assistant turns sit in ``{% generation %}`` blocks so ``return_assistant_tokens_mask`` marks
exactly the tokens the loss is taken on; ``weight: 0`` turns are context only."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = (IM_START, IM_END, "<|endoftext|>", "<pad>")

# Written without whitespace control: transformers renders with trim_blocks, so a newline
# that directly follows a block tag is emitted through an expression instead.
NL = '{{ "\\n" }}'
CHAT_TEMPLATE = (
    "{% if messages and messages[0].role == 'system' %}"
    "{% set system_text = messages[0].content %}{% set rest = messages[1:] %}"
    "{% else %}{% set system_text = '' %}{% set rest = messages %}{% endif %}"
    "{% if tools %}"
    "<|im_start|>system\n{{ system_text }}{% if system_text %}" + NL + NL + "{% endif %}# Tools\n<tools>"
    "{% for tool in tools %}" + NL + "{{ tool | tojson }}{% endfor %}" + NL + "</tools>\n"
    'Call a tool with <tool_call>{"name": ..., "arguments": {...}}</tool_call>.<|im_end|>'
    + NL
    + "{% elif system_text %}<|im_start|>system\n{{ system_text }}<|im_end|>"
    + NL
    + "{% endif %}"
    "{% for message in rest %}"
    "{% if message.role == 'assistant' %}"
    "{% set body %}"
    "{% if message.reasoning_content %}<think>\n{{ message.reasoning_content }}\n</think>" + NL + "{% endif %}"
    "{{ message.content or '' }}"
    "{% for call in message.tool_calls or [] %}"
    + NL
    + '<tool_call>\n{"name": {{ call.function.name | tojson }}, "arguments": '
    "{% if call.function.arguments is string %}{{ call.function.arguments }}"
    "{% else %}{{ call.function.arguments | tojson }}{% endif %}"
    "}\n</tool_call>"
    "{% endfor %}<|im_end|>"
    "{% endset %}"
    "<|im_start|>assistant\n"
    "{% if message.weight is defined and message.weight == 0 %}{{ body }}"
    "{% else %}{% generation %}{{ body }}{% endgeneration %}{% endif %}" + NL + "{% else %}"
    "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>" + NL + "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_TOOL_CALL = re.compile(r"\n?<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)
_THINK = re.compile(r"^<think>\n(.*?)\n</think>\n", re.DOTALL)


def parse_assistant_text(text: str) -> dict[str, Any]:
    """Turn generated assistant text back into an OpenAI assistant message.

    The inverse of the template's assistant body: reasoning, content, then tool calls.
    Malformed tool-call JSON stays in the content rather than being dropped."""
    text = text.split(IM_END, 1)[0]
    message: dict[str, Any] = {"role": "assistant"}
    think = _THINK.match(text)
    if think:
        message["reasoning_content"] = think.group(1)
        text = text[think.end() :]
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    cursor = 0
    for match in _TOOL_CALL.finditer(text):
        try:
            payload = json.loads(match.group(1))
            name, arguments = payload["name"], payload.get("arguments", {})
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
        kept.append(text[cursor : match.start()])
        cursor = match.end()
        calls.append(
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
        )
    kept.append(text[cursor:])
    message["content"] = "".join(kept)
    if calls:
        message["tool_calls"] = calls
    return message
