"""Per-trajectory measurements (Appendix B of SkillGym) taken from a raw ATIF document, and the
order statistics used to summarise them.

Definitions: ``M`` saved assistant (agent) messages, ``C`` structured tool calls, ``T`` o200k_base
tokens of all saved text. ``T`` splits into reasoning, tool output, tool calls (name + arguments)
and the rest (system, user and assistant message text)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

COMPONENTS = ("reasoning", "tool_output", "tool_calls", "rest")


def quantile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default ``linear`` method)."""
    if not values:
        return None
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def distribution(values: Sequence[float]) -> dict[str, float | int | None]:
    return {
        "n": len(values),
        "mean": (sum(values) / len(values)) if values else None,
        "median": quantile(values, 0.5),
        "p90": quantile(values, 0.9),
        "p95": quantile(values, 0.95),
        "max": max(values) if values else None,
    }


def top_share(values: Sequence[float], fraction: float) -> float | None:
    """Share of the total held by the largest ``ceil(fraction * N)`` values."""
    total = sum(values)
    if not values or total <= 0:
        return None
    count = math.ceil(fraction * len(values))
    return sum(sorted(values, reverse=True)[:count]) / total


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


@dataclass
class TrajectoryStats:
    steps: int
    messages: int
    tool_calls: int
    tokens: dict[str, int]
    message_shares: tuple[float, float, float] | None  # 0, 1, >=2 tool calls per assistant message

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())


def split_text(doc: dict[str, Any]) -> tuple[dict[str, str], int, int, int, tuple[float, float, float] | None]:
    """The saved text of a trajectory by component, plus steps, M, C and the message shares."""
    parts: dict[str, list[str]] = {name: [] for name in COMPONENTS}
    steps = doc.get("steps") or []
    messages = calls = zero = one = many = 0
    for step in steps:
        parts["rest"].append(_content_text(step.get("message")))
        if step.get("source") == "agent":
            messages += 1
            if step.get("reasoning_content"):
                parts["reasoning"].append(step["reasoning_content"])
            step_calls = step.get("tool_calls") or []
            calls += len(step_calls)
            if not step_calls:
                zero += 1
            elif len(step_calls) == 1:
                one += 1
            else:
                many += 1
            for call in step_calls:
                parts["tool_calls"].append(
                    f"{call.get('function_name', '')} {json.dumps(call.get('arguments') or {}, ensure_ascii=False)}"
                )
        observation = step.get("observation") or {}
        for result in observation.get("results") or []:
            parts["tool_output"].append(_content_text(result.get("content")))
    shares = (zero / messages, one / messages, many / messages) if messages else None
    texts = {name: "\n".join(t for t in chunks if t) for name, chunks in parts.items()}
    return texts, len(steps), messages, calls, shares


def measure(doc: dict[str, Any], count: Callable[[str], int]) -> TrajectoryStats:
    texts, steps, messages, calls, shares = split_text(doc)
    return TrajectoryStats(
        steps=steps,
        messages=messages,
        tool_calls=calls,
        tokens={name: count(text) for name, text in texts.items()},
        message_shares=shares,
    )
