"""Codex CLI rollout files (``$CODEX_HOME/sessions/**/rollout-*.jsonl``) → ATIF.

Each line is ``{timestamp, type, payload}``. ``response_item`` payloads carry the conversation:
``message`` (user / developer / assistant), ``reasoning``, ``function_call`` / ``custom_tool_call``
with their ``*_output`` by ``call_id``, ``web_search_call``. Model output items up to the next
tool output form one agent step. ``event_msg`` ``token_count`` gives the usage of the last model
call (``last_token_usage``) and the running total; other ``event_msg`` records repeat
response items and are skipped."""

from __future__ import annotations

import json
from typing import Any

from skillgym_core.contracts.atif import Metrics, ObservationResult, ToolCall, Trajectory

from skillgym_sampler.convert.common import PendingAgentStep, iso_or_none, parse_arguments, text_of
from skillgym_sampler.errors import ConversionError
from skillgym_sampler.recorder import TrajectoryRecorder

_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        try:
            decoded = json.loads(output)
        except json.JSONDecodeError:
            return output
        if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
            return str(decoded["output"])
        return output
    if isinstance(output, dict) and isinstance(output.get("output"), str):
        return str(output["output"])
    return text_of(output)


def _usage_metrics(usage: dict[str, Any]) -> Metrics:
    return Metrics(
        prompt_tokens=int(usage.get("input_tokens") or 0),
        completion_tokens=int(usage.get("output_tokens") or 0),
        cached_tokens=int(usage.get("cached_input_tokens") or 0),
        extra={"reasoning_output_tokens": int(usage.get("reasoning_output_tokens") or 0)},
    )


def codex_rollout_to_atif(
    records: list[dict[str, Any]], *, session_id: str | None = None, trajectory_id: str | None = None
) -> Trajectory:
    entries: list[PendingAgentStep | tuple[str, str, str | None]] = []
    current: PendingAgentStep | None = None
    owners: dict[str, PendingAgentStep] = {}
    model = version = None
    total_usage: dict[str, Any] = {}
    for record in records:
        kind, payload = record.get("type"), record.get("payload") or {}
        stamp = iso_or_none(record.get("timestamp"))
        if kind == "session_meta":
            session_id = session_id or payload.get("id")
            version = version or payload.get("cli_version")
        elif kind == "turn_context":
            model = model or payload.get("model")
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info") or {}
            last = info.get("last_token_usage")
            total_usage = info.get("total_token_usage") or total_usage
            target = next((e for e in reversed(entries) if isinstance(e, PendingAgentStep)), None)
            if isinstance(last, dict) and target is not None and target.metrics is None:
                target.metrics = _usage_metrics(last)
        elif kind == "response_item":
            item_type = payload.get("type")
            if item_type == "message":
                role, text = payload.get("role"), text_of(payload.get("content"))
                if role == "assistant":
                    if current is None or current.results:
                        current = PendingAgentStep(model_name=model, timestamp=stamp)
                        entries.append(current)
                    current.message = f"{current.message}\n{text}".strip("\n")
                else:
                    current = None
                    entries.append(("system" if role in ("developer", "system") else "user", text, stamp))
            elif item_type == "reasoning" or item_type in _CALLS or item_type == "web_search_call":
                if current is None or current.results:
                    current = PendingAgentStep(model_name=model, timestamp=stamp)
                    entries.append(current)
                if item_type == "reasoning":
                    summary = text_of(payload.get("summary")) or text_of(payload.get("content"))
                    if summary:
                        current.reasoning.append(summary)
                elif item_type == "web_search_call":
                    call_id = str(payload.get("id") or f"web_search_{len(owners)}")
                    current.calls.append(ToolCall(tool_call_id=call_id, function_name="web_search",
                                                  arguments=payload.get("action") or {}))
                    owners[call_id] = current
                else:
                    call_id = str(payload.get("call_id") or payload.get("id"))
                    raw = payload.get("arguments", payload.get("input", payload.get("action")))
                    current.calls.append(ToolCall(tool_call_id=call_id, function_name=str(payload.get("name") or
                                                                                          item_type),
                                                  arguments=parse_arguments(raw)))
                    owners[call_id] = current
            elif item_type in _OUTPUTS:
                call_id = str(payload.get("call_id"))
                owner = owners.get(call_id)
                if owner is None:
                    raise ConversionError(f"tool output for unknown call_id {call_id!r}")
                owner.results[call_id] = ObservationResult(source_call_id=call_id,
                                                           content=_output_text(payload.get("output")))
    if not entries:
        raise ConversionError("the Codex rollout holds no messages")
    recorder = TrajectoryRecorder(
        session_id=session_id or "unknown",
        trajectory_id=trajectory_id or session_id or "unknown",
        agent_name="codex",
        agent_version=str(version or "unknown"),
        model_name=model,
    )
    for entry in entries:
        if isinstance(entry, PendingAgentStep):
            entry.model_name = entry.model_name or model
            entry.flush(recorder)
        elif entry[0] == "system":
            recorder.system(entry[1], timestamp=entry[2])
        else:
            recorder.user(entry[1], timestamp=entry[2])
    return recorder.build(final_extra={"total_token_usage": total_usage} if total_usage else None)
