from __future__ import annotations

import json

import pytest
from skillgym_core.contracts.atif import Agent, Observation, ObservationResult, Step, ToolCall, Trajectory
from skillgym_trainer.errors import ExportError
from skillgym_trainer.export import atif_to_chat

from tests.trainer.factories import make_trajectory


def test_chat_example_has_tool_calls_and_tool_messages() -> None:
    example = atif_to_chat(make_trajectory(3, turns=2))
    roles = [message["role"] for message in example["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    first = example["messages"][2]
    call = first["tool_calls"][0]
    assert call["type"] == "function"
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {"command": "cat /work/skills/text-summary/SKILL.md"}
    tool = example["messages"][3]
    assert tool["role"] == "tool" and tool["tool_call_id"] == call["id"]
    assert tool["content"].startswith("ok: summary.txt step 0 ")
    assert first["reasoning_content"].startswith("The task needs summary.txt")
    assert example["tools"][0]["function"]["name"] == "bash"
    assert example["tools"][0]["type"] == "function"


def test_bare_tool_schema_content_parts_and_copied_context() -> None:
    trajectory = Trajectory(
        session_id="s",
        agent=Agent(name="a", version="1", tool_definitions=[{"name": "read", "parameters": {"type": "object"}}]),
        steps=[
            Step(step_id=1, source="user", message=[{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]),
            Step(step_id=2, source="agent", message="old", is_copied_context=True),
            Step(
                step_id=3,
                source="agent",
                message="",
                tool_calls=[ToolCall(tool_call_id="c", function_name="read", arguments={"path": "é"})],
                observation=Observation(
                    results=[
                        ObservationResult(source_call_id="c", content=[{"type": "text", "text": "body"}]),
                        ObservationResult(content="note from the environment"),
                    ]
                ),
            ),
        ],
    )
    example = atif_to_chat(trajectory)
    messages = example["messages"]
    assert messages[0] == {"role": "user", "content": "hi\nthere"}
    assert messages[1]["weight"] == 0
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {"path": "é"}
    assert messages[3] == {"role": "tool", "tool_call_id": "c", "content": "body"}
    assert messages[4] == {"role": "user", "content": "note from the environment"}
    assert example["tools"] == [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]


def test_trajectory_without_trainable_agent_turn_is_rejected() -> None:
    trajectory = Trajectory(
        session_id="s",
        agent=Agent(name="a", version="1"),
        steps=[Step(step_id=1, source="user", message="hello")],
    )
    with pytest.raises(ExportError) as info:
        atif_to_chat(trajectory)
    assert info.value.reason == "export"


def test_reasoning_can_be_left_out() -> None:
    example = atif_to_chat(make_trajectory(1), include_reasoning=False)
    assert all("reasoning_content" not in message for message in example["messages"])
