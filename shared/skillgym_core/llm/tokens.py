"""The token ids and log-probabilities of one model turn, read from an OpenAI-compatible answer.

Servers put them in different places: OpenAI's ``choices[0].logprobs.content[].logprob``; vLLM's
``prompt_token_ids`` and ``choices[0].token_ids`` (``return_token_ids``); llama.cpp's server and
SkillGym's ``serve-model`` also give each ``logprobs.content`` entry its token ``id``. What an
answer does not carry stays ``None``; a value of the wrong type or length is left out rather than
recorded wrong."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenTrace:
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None


def _ints(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    return None


def token_trace(data: dict[str, Any]) -> TokenTrace | None:
    """What ``data`` (a chat completion) says of its tokens, or None when it says nothing."""
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    prompt = _ints(data.get("prompt_token_ids")) or _ints(choice.get("prompt_token_ids"))
    completion = _ints(choice.get("token_ids"))
    logprobs: list[float] | None = None
    content = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
    if isinstance(content, list) and all(isinstance(entry, dict) for entry in content):
        values = [entry.get("logprob") for entry in content]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            logprobs = [float(v) for v in values]
        if completion is None:
            completion = _ints([entry.get("id") for entry in content]) if content else None
    if completion is not None and logprobs is not None and len(completion) != len(logprobs):
        logprobs = None
    if prompt is None and completion is None and logprobs is None:
        return None
    return TokenTrace(prompt_token_ids=prompt, completion_token_ids=completion, logprobs=logprobs)
