from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.atif_validate import ATIFValidationError, main, validate_trajectory

VALID: dict[str, Any] = {
    "schema_version": "ATIF-v1.7",
    "session_id": "s-1",
    "trajectory_id": "t-1",
    "agent": {
        "name": "builtin",
        "version": "1.0",
        "model_name": "m",
        "tool_definitions": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
    },
    "steps": [
        {"step_id": 1, "timestamp": "2026-05-09T10:00:00Z", "source": "system", "message": "be careful"},
        {"step_id": 2, "source": "user", "message": [{"type": "text", "text": "do it"}]},
        {
            "step_id": 3,
            "source": "agent",
            "message": "",
            "model_name": "m",
            "reasoning_content": "think",
            "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}}],
            "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]},
            "metrics": {"prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 40, "cost_usd": 0.01},
        },
        {"step_id": 4, "source": "agent", "message": "done", "metrics": {"prompt_tokens": 120, "completion_tokens": 5}},
    ],
    "final_metrics": {"total_prompt_tokens": 220, "total_completion_tokens": 15, "total_steps": 4},
}


def _errors(doc: dict[str, Any]) -> list[str]:
    return [f"{i.path}: {i.message}" for i in validate_trajectory(doc).errors]


def test_a_conforming_document_passes_without_warnings() -> None:
    report = validate_trajectory(VALID)
    assert report.valid and report.issues == []


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.pop("agent"), "$.agent: required object is missing"),
        (lambda d: d["agent"].pop("version"), "$.agent.version: required field is missing"),
        (lambda d: d.update(schema_version="ATIF-v2.0"), "unsupported version"),
        (lambda d: d.update(steps=[]), "$.steps: must be a non-empty list"),
        (lambda d: d["steps"][2].update(step_id=7), "sequential from 1: expected 3, got 7"),
        (lambda d: d["steps"][0].update(source="tool"), "must be system, user or agent"),
        (lambda d: d["steps"][1].update(metrics={"prompt_tokens": 1}), "only allowed on agent steps"),
        (lambda d: d["steps"][2]["observation"]["results"][0].update(source_call_id="c9"), "matches no tool_call_id"),
        (lambda d: d["steps"][2]["tool_calls"].append(dict(d["steps"][2]["tool_calls"][0])), "duplicate tool_call_id"),
        (lambda d: d["steps"][2]["tool_calls"][0].update(arguments="ls"), "expected dict, got str"),
        (lambda d: d["steps"][2].update(surprise=1), "unknown field"),
        (lambda d: d["steps"][2]["metrics"].update(cached_tokens=500), "exceed prompt_tokens"),
        (lambda d: d["steps"][2]["metrics"].update(prompt_tokens=-1), "must be >= 0"),
        (lambda d: d["steps"][0].update(timestamp="yesterday"), "not an ISO 8601 timestamp"),
        (lambda d: d["steps"][1].update(message=[{"type": "audio"}]), "unknown content part type"),
        (lambda d: d["steps"][2].pop("message"), "message: required field is missing"),
        (lambda d: d.update(schema_version="ATIF-v1.5", trajectory_id=None), "$.session_id"),
    ],
)
def test_each_violation_is_reported(mutate: Any, expected: str) -> None:
    doc = copy.deepcopy(VALID)
    if expected == "$.session_id":
        doc.pop("session_id")
    mutate(doc)
    errors = _errors(doc)
    assert any(expected in e for e in errors), errors


def test_inconsistent_totals_are_warnings() -> None:
    doc = copy.deepcopy(VALID)
    doc["final_metrics"].update(total_steps=9, total_prompt_tokens=1)
    report = validate_trajectory(doc)
    assert report.valid
    assert {w.path for w in report.warnings} == {"$.final_metrics.total_steps", "$.final_metrics.total_prompt_tokens"}


def test_embedded_subagents_and_references() -> None:
    doc = copy.deepcopy(VALID)
    sub = {
        "schema_version": "ATIF-v1.7",
        "trajectory_id": "sub-1",
        "agent": {"name": "x", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    doc["subagent_trajectories"] = [sub]
    doc["steps"][2]["observation"]["results"][0]["subagent_trajectory_ref"] = [{"trajectory_id": "sub-1"}]
    assert validate_trajectory(doc).valid
    doc["subagent_trajectories"].append(copy.deepcopy(sub))
    doc["steps"][2]["observation"]["results"][0]["subagent_trajectory_ref"] = [{"session_id": "s"}]
    errors = _errors(doc)
    assert any("duplicate embedded trajectory_id" in e for e in errors)
    assert any("must set trajectory_id or trajectory_path" in e for e in errors)
    doc["subagent_trajectories"][1].pop("trajectory_id")
    assert any("subagent_trajectories[1].trajectory_id: required" in e for e in _errors(doc))


def test_raise_and_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = copy.deepcopy(VALID)
    bad["steps"][0]["step_id"] = 0
    with pytest.raises(ATIFValidationError) as info:
        validate_trajectory(bad).raise_for_errors("bad.json")
    assert info.value.reason == "atif_invalid"
    good_path, bad_path = tmp_path / "good.json", tmp_path / "bad.json"
    good_path.write_text(json.dumps(VALID))
    bad_path.write_text(json.dumps(bad))
    assert main([str(good_path)]) == 0
    assert main([str(good_path), str(bad_path)]) == 1
    assert "bad.json: INVALID" in capsys.readouterr().out
    assert not validate_trajectory(b"{not json").valid
