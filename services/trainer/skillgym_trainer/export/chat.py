"""ATIF trajectory -> OpenAI chat fine-tuning example (``messages`` + ``tools``).

Agent steps become assistant messages with ``tool_calls`` (JSON-string arguments); each
observation result becomes a ``role: tool`` message answering its call. Steps marked
``is_copied_context`` are kept as context but get ``weight: 0`` so no loss is taken on them."""

from __future__ import annotations

import json
from typing import Any

from skillgym_core.contracts.atif import ObservationResult, Step, Trajectory

from skillgym_trainer.errors import ExportError


def content_text(content: str | list[dict[str, Any]] | None) -> str:
    """Flatten an ATIF message or observation content to text (text parts only)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content:
        if part.get("type") == "text":
            parts.append(str(part.get("text", "")))
        elif part.get("type") == "image":
            source = part.get("source") or {}
            parts.append(f"[image: {source.get('path', '')}]")
    return "\n".join(parts)


def normalise_tool(definition: dict[str, Any]) -> dict[str, Any]:
    """Accept ``{"type":"function","function":{...}}`` or a bare ``{"name",...}`` function schema."""
    function = definition.get("function", definition)
    if not isinstance(function, dict) or not function.get("name"):
        raise ExportError("tool definition has no function name", definition=definition)
    clean = {"name": function["name"]}
    if function.get("description"):
        clean["description"] = function["description"]
    clean["parameters"] = function.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": clean}


def _assistant_message(step: Step, include_reasoning: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content_text(step.message)}
    if include_reasoning and step.reasoning_content:
        message["reasoning_content"] = step.reasoning_content
    if step.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.tool_call_id,
                "type": "function",
                "function": {
                    "name": call.function_name,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in step.tool_calls
        ]
    if step.is_copied_context:
        message["weight"] = 0
    return message


def _observation_messages(step: Step, results: list[ObservationResult]) -> list[dict[str, Any]]:
    call_ids = {call.tool_call_id for call in step.tool_calls or []}
    messages: list[dict[str, Any]] = []
    for result in results:
        text = content_text(result.content)
        if result.source_call_id is not None and result.source_call_id in call_ids:
            messages.append({"role": "tool", "tool_call_id": result.source_call_id, "content": text})
        else:
            # An observation that answers no call (e.g. environment feedback) is user-side context.
            messages.append({"role": "user", "content": text})
    return messages


def atif_to_chat(traj: Trajectory, *, include_reasoning: bool = True) -> dict[str, Any]:
    """One training example in OpenAI chat format: ``{"messages": [...], "tools": [...]}``."""
    messages: list[dict[str, Any]] = []
    for step in traj.steps:
        if step.source == "agent":
            messages.append(_assistant_message(step, include_reasoning))
        else:
            messages.append({"role": step.source, "content": content_text(step.message)})
        if step.observation is not None:
            messages.extend(_observation_messages(step, step.observation.results))
    if not any(m["role"] == "assistant" and m.get("weight", 1) for m in messages):
        raise ExportError("trajectory has no trainable agent step", trajectory_id=traj.trajectory_id or traj.session_id)
    tools = [normalise_tool(tool) for tool in traj.agent.tool_definitions or []]
    return {"messages": messages, "tools": tools}
