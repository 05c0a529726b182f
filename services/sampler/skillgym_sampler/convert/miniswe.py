"""mini-swe-agent ``*.traj.json`` (format ``mini-swe-agent-1.x``) → ATIF.

Assistant messages become agent steps (their ``extra.actions`` are the bash calls, the usage of
``extra.response`` the metrics); ``tool`` messages (or, in text mode, user messages carrying a
``returncode``) are the observations; other user messages (format errors) become user steps with
the rejected model answer recorded as an agent step first. A submitting command ends the run
without a tool message, so its result is rebuilt from the exit message."""

from __future__ import annotations

from typing import Any

from skillgym_core.contracts.atif import Metrics, ObservationResult, ToolCall, Trajectory

from skillgym_sampler.convert.common import PendingAgentStep, iso_from_unix, text_of
from skillgym_sampler.errors import ConversionError
from skillgym_sampler.recorder import TrajectoryRecorder

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Execute a bash command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}


def _metrics(response: Any, cost: Any) -> Metrics | None:
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details") or {}
    return Metrics(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
        cost_usd=float(cost) if isinstance(cost, int | float) and cost > 0 else None,
    )


def _assistant_step(message: dict[str, Any], model_name: str | None, counter: list[int]) -> PendingAgentStep:
    extra = message.get("extra") or {}
    step = PendingAgentStep(
        message=text_of(message.get("content")),
        metrics=_metrics(extra.get("response"), extra.get("cost")),
        model_name=model_name,
        timestamp=iso_from_unix(extra.get("timestamp")),
    )
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        step.reasoning.append(reasoning)
    for action in extra.get("actions") or []:
        counter[0] += 1
        call_id = str(action.get("tool_call_id") or f"call_{counter[0]}")
        step.calls.append(ToolCall(tool_call_id=call_id, function_name="bash",
                                   arguments={"command": str(action.get("command", ""))}))
    return step


def _rejected_answer(message: dict[str, Any], model_name: str | None) -> PendingAgentStep | None:
    response = (message.get("extra") or {}).get("response")
    if not isinstance(response, dict):
        return None
    choices = response.get("choices") or [{}]
    answer = choices[0].get("message") or {}
    step = PendingAgentStep(message=text_of(answer.get("content")), model_name=model_name,
                            metrics=_metrics(response, (message.get("extra") or {}).get("cost")),
                            extra={"format_error": True})
    for index, call in enumerate(answer.get("tool_calls") or []):
        function = call.get("function") or {}
        step.calls.append(ToolCall(tool_call_id=str(call.get("id") or f"rejected_{index}"),
                                   function_name=str(function.get("name") or ""),
                                   arguments={"raw_arguments": str(function.get("arguments") or "")}))
        step.results[step.calls[-1].tool_call_id] = ObservationResult(
            source_call_id=step.calls[-1].tool_call_id, content="not executed: " + text_of(message.get("content"))
        )
    return step


def miniswe_to_atif(raw: dict[str, Any], *, session_id: str, trajectory_id: str | None = None) -> Trajectory:
    if not isinstance(raw, dict) or not str(raw.get("trajectory_format", "")).startswith("mini-swe-agent"):
        raise ConversionError("not a mini-swe-agent trajectory (trajectory_format missing)")
    messages = raw.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ConversionError("mini-swe-agent trajectory has no messages")
    info = raw.get("info") or {}
    config = info.get("config") or {}
    model_name = (config.get("model") or {}).get("model_name")
    recorder = TrajectoryRecorder(
        session_id=session_id,
        trajectory_id=trajectory_id or session_id,
        agent_name="mini-swe-agent",
        agent_version=str(info.get("mini_version") or "unknown"),
        model_name=model_name,
        tool_definitions=[BASH_TOOL],
        extra={"agent_type": config.get("agent_type"), "environment_type": config.get("environment_type")},
    )
    pending: PendingAgentStep | None = None
    counter = [0]
    exit_extra: dict[str, Any] = {}

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            pending.flush(recorder)
            pending = None

    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ConversionError(f"message {index} is not an object")
        role = message.get("role")
        extra = message.get("extra") or {}
        if role == "system":
            flush()
            recorder.system(text_of(message.get("content")))
        elif role == "assistant":
            flush()
            pending = _assistant_step(message, model_name, counter)
        elif role == "tool" or (role == "user" and "returncode" in extra and pending is not None):
            call_id = message.get("tool_call_id")
            if pending is None:
                raise ConversionError(f"message {index}: a tool result without an assistant turn")
            if call_id is None:
                unanswered = [c.tool_call_id for c in pending.calls if c.tool_call_id not in pending.results]
                call_id = unanswered[0] if unanswered else None
            if call_id is None or not pending.has_call(str(call_id)):
                raise ConversionError(f"message {index}: tool result for unknown call {call_id!r}")
            pending.results[str(call_id)] = ObservationResult(
                source_call_id=str(call_id),
                content=text_of(message.get("content")),
                extra={"returncode": extra.get("returncode"), "exception_info": extra.get("exception_info") or None},
            )
        elif role == "user":
            flush()
            if extra.get("interrupt_type") == "FormatError":
                rejected = _rejected_answer(message, model_name)
                if rejected is not None:
                    rejected.flush(recorder)
            recorder.user(text_of(message.get("content")))
        elif role == "exit":
            exit_extra = dict(extra)
            if pending is not None:
                for call in pending.calls:
                    if call.tool_call_id not in pending.results:
                        submission = str(extra.get("submission") or "")
                        pending.results[call.tool_call_id] = ObservationResult(
                            source_call_id=call.tool_call_id,
                            content=f"{SUBMIT_MARKER}\n{submission}" if extra.get("exit_status") == "Submitted"
                            else f"not executed: {extra.get('exit_status')}",
                            extra={"exit_status": extra.get("exit_status")},
                        )
            flush()
        else:
            raise ConversionError(f"message {index}: unknown role {role!r}")
    flush()
    if not recorder.steps:
        raise ConversionError("mini-swe-agent trajectory produced no steps")
    stats = info.get("model_stats") or {}
    recorder.note(f"exit_status: {info.get('exit_status') or exit_extra.get('exit_status') or 'unknown'}")
    return recorder.build(final_extra={
        "exit_status": info.get("exit_status") or exit_extra.get("exit_status"),
        "submission": info.get("submission") or exit_extra.get("submission"),
        "api_calls": stats.get("api_calls"),
        "instance_cost": stats.get("instance_cost"),
    })
