"""Claude Code session logs → ATIF.

Reads either the session JSONL under ``$CLAUDE_CONFIG_DIR/projects/*/*.jsonl`` or the
``--output-format=stream-json`` stream (same ``assistant``/``user`` record shape). One
``message.id`` may span several records (one per content block): they form one agent step and
the last ``usage`` of that id counts. ``tool_result`` blocks in user records are the observations;
sidechain (subagent) records are left out of the main trajectory and counted in ``extra``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from skillgym_core.contracts.atif import Metrics, ObservationResult, ToolCall, Trajectory

from skillgym_sampler.convert.common import PendingAgentStep, iso_or_none, text_of
from skillgym_sampler.errors import ConversionError
from skillgym_sampler.recorder import TrajectoryRecorder


def read_jsonl(lines: Iterable[str]) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConversionError(f"line {number} is not JSON: {exc}", line=number) from exc
        if isinstance(record, dict):
            records.append(record)
    return records


def _metrics(usage: Any) -> Metrics | None:
    if not isinstance(usage, dict):
        return None
    cache_read = int(usage.get("cache_read_input_tokens") or 0)
    cache_write = int(usage.get("cache_creation_input_tokens") or 0)
    return Metrics(
        prompt_tokens=int(usage.get("input_tokens") or 0) + cache_read + cache_write,
        completion_tokens=int(usage.get("output_tokens") or 0),
        cached_tokens=cache_read,
        extra={"cache_creation_input_tokens": cache_write} if cache_write else None,
    )


def _result_content(block: dict[str, Any]) -> str | list[dict[str, Any]]:
    content = block.get("content")
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in content):
        return [{"type": "text", "text": text_of([b for b in content if b.get("type") == "text"])}]
    return text_of(content)


def claude_session_to_atif(
    records: list[dict[str, Any]], *, session_id: str | None = None, trajectory_id: str | None = None,
    total_cost_usd: float | None = None,
) -> Trajectory:
    entries: list[PendingAgentStep | tuple[str, str, str | None]] = []
    by_message_id: dict[str, PendingAgentStep] = {}
    call_owner: dict[str, PendingAgentStep] = {}
    model = version = None
    tools: list[str] = []
    sidechain = 0
    result_info: dict[str, Any] = {}
    for record in records:
        kind = record.get("type")
        session_id = session_id or record.get("sessionId") or record.get("session_id")
        version = version or record.get("version")
        if record.get("isSidechain"):
            sidechain += 1
            continue
        if kind == "system" and record.get("subtype") == "init":
            model = model or record.get("model")
            tools = [str(t) for t in record.get("tools") or []]
        elif kind == "result":
            result_info = {k: record.get(k) for k in ("subtype", "is_error", "duration_ms", "num_turns",
                                                       "total_cost_usd") if record.get(k) is not None}
        elif kind == "assistant":
            message = record.get("message") or {}
            message_id = str(message.get("id") or record.get("uuid") or len(entries))
            model = model or message.get("model")
            step = by_message_id.get(message_id)
            if step is None:
                step = PendingAgentStep(model_name=message.get("model"), timestamp=iso_or_none(record.get("timestamp")))
                by_message_id[message_id] = step
                entries.append(step)
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    step.message = f"{step.message}\n{block.get('text', '')}".strip("\n")
                elif block.get("type") == "thinking":
                    step.reasoning.append(str(block.get("thinking") or ""))
                elif block.get("type") == "tool_use":
                    call = ToolCall(tool_call_id=str(block.get("id")), function_name=str(block.get("name")),
                                    arguments=block.get("input") if isinstance(block.get("input"), dict) else {})
                    if not step.has_call(call.tool_call_id):
                        step.calls.append(call)
                        call_owner[call.tool_call_id] = step
            usage_metrics = _metrics(message.get("usage"))
            if usage_metrics is not None:
                step.metrics = usage_metrics
        elif kind == "user":
            content = (record.get("message") or {}).get("content")
            blocks = content if isinstance(content, list) else []
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            for block in results:
                owner = call_owner.get(str(block.get("tool_use_id")))
                if owner is None:
                    raise ConversionError(f"tool_result for unknown tool_use_id {block.get('tool_use_id')!r}")
                owner.results[str(block.get("tool_use_id"))] = ObservationResult(
                    source_call_id=str(block.get("tool_use_id")),
                    content=_result_content(block),
                    extra={"is_error": True} if block.get("is_error") else None,
                )
            text = text_of(content if isinstance(content, str) else [b for b in blocks if b.get("type") == "text"])
            if text and not results:
                entries.append(("user", text, iso_or_none(record.get("timestamp"))))
    if not entries:
        raise ConversionError("the Claude Code log holds no user or assistant messages")
    recorder = TrajectoryRecorder(
        session_id=session_id or "unknown",
        trajectory_id=trajectory_id or session_id or "unknown",
        agent_name="claude-code",
        agent_version=str(version or "unknown"),
        model_name=model,
        tool_definitions=[{"type": "function", "function": {"name": name}} for name in tools] or None,
    )
    for entry in entries:
        if isinstance(entry, PendingAgentStep):
            entry.flush(recorder)
        else:
            recorder.user(entry[1], timestamp=entry[2])
    cost = total_cost_usd if total_cost_usd is not None else result_info.get("total_cost_usd")
    trajectory = recorder.build(final_extra={"sidechain_records": sidechain, **result_info})
    if trajectory.final_metrics is not None and isinstance(cost, int | float):
        trajectory.final_metrics.total_cost_usd = float(cost)
    return trajectory
