"""Pieces every converter needs: an agent step assembled over several log records, text of
content blocks, and timestamps."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from skillgym_core.contracts.atif import Metrics, ObservationResult, ToolCall

from skillgym_sampler.recorder import TrajectoryRecorder


def iso_from_unix(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(float(value), dt.UTC).isoformat().replace("+00:00", "Z")
    return None


def iso_or_none(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def text_of(content: Any) -> str:
    """Plain text of a string or a list of content blocks (OpenAI / Anthropic shapes)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "tool_result":
                    parts.append(text_of(block.get("content")))
        return "\n".join(parts)
    return json.dumps(content)


def parse_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw or "{}")
        except json.JSONDecodeError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return {"input": raw}


@dataclass
class PendingAgentStep:
    """An agent turn collected across records; results arrive after the calls."""

    message: str = ""
    reasoning: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, ObservationResult] = field(default_factory=dict)
    metrics: Metrics | None = None
    model_name: str | None = None
    timestamp: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def has_call(self, call_id: str) -> bool:
        return any(call.tool_call_id == call_id for call in self.calls)

    def flush(self, recorder: TrajectoryRecorder) -> None:
        ordered = [self.results[c.tool_call_id] for c in self.calls if c.tool_call_id in self.results]
        ordered += [r for key, r in self.results.items() if not self.has_call(key)]
        recorder.agent_step(
            self.message,
            tool_calls=self.calls or None,
            results=ordered or None,
            reasoning="\n\n".join(self.reasoning) or None,
            metrics=self.metrics,
            model_name=self.model_name,
            timestamp=self.timestamp,
            extra=self.extra or None,
        )
