"""Recorded Claude Code / Codex session logs and mini-swe-agent trajectories → valid ATIF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.atif_validate import validate_trajectory
from skillgym_sampler.convert import claude_session_to_atif, codex_rollout_to_atif, miniswe_to_atif
from skillgym_sampler.convert.claude import read_jsonl
from skillgym_sampler.errors import ConversionError
from skillgym_sampler.skilluse import explicit_skill_use

DATA = Path(__file__).parent / "data"


def _clean(trajectory: object) -> None:
    report = validate_trajectory(trajectory)
    assert report.valid and not report.warnings, [str(i) for i in report.issues]


def test_claude_code_session_keeps_calls_results_and_usage() -> None:
    records = read_jsonl((DATA / "claude_session.jsonl").read_text().splitlines())
    trajectory = claude_session_to_atif(records, trajectory_id="t-claude", total_cost_usd=0.0123)
    _clean(trajectory)
    assert trajectory.session_id == "5f1c2a9e-0b7d-4c1e-9a51-3e2d7f0c8b11"
    assert trajectory.agent.name == "claude-code" and trajectory.agent.version == "2.1.3"
    assert [s.source for s in trajectory.steps] == ["user", "agent", "user", "agent", "agent"]
    skill_step, work_step, final_step = trajectory.steps[1], trajectory.steps[3], trajectory.steps[4]
    assert skill_step.reasoning_content == "A ledger skill is installed; read it first."
    assert skill_step.tool_calls[0].function_name == "Skill"
    # one message id over several records: one step, the last usage wins
    assert skill_step.metrics.prompt_tokens == 12 + 2048 + 9000 and skill_step.metrics.completion_tokens == 95
    assert skill_step.metrics.cached_tokens == 9000
    assert [c.tool_call_id for c in work_step.tool_calls] == ["toolu_02", "toolu_03"]
    assert work_step.tool_calls[0].arguments["command"].startswith("awk -F,")
    assert [r.source_call_id for r in work_step.observation.results] == ["toolu_02", "toolu_03"]
    assert "42" in work_step.observation.results[1].content
    assert work_step.message == "I'll sum the amount column and check the file."
    assert final_step.tool_calls is None and "42" in final_step.message
    assert "Base directory for this skill" in trajectory.steps[2].message
    final = trajectory.final_metrics
    assert final.total_completion_tokens == 95 + 160 + 42 and final.total_cost_usd == 0.0123
    assert final.extra["sidechain_records"] == 1
    assert explicit_skill_use(trajectory, "ledger-total")


def test_codex_rollout_keeps_calls_results_and_usage() -> None:
    records = read_jsonl((DATA / "codex_rollout.jsonl").read_text().splitlines())
    trajectory = codex_rollout_to_atif(records, trajectory_id="t-codex")
    _clean(trajectory)
    assert trajectory.session_id == "0199b1e2-7f3a-7c10-b2d4-1a2b3c4d5e6f"
    assert trajectory.agent.model_name == "gpt-5.4" and trajectory.agent.version == "0.57.0"
    assert [s.source for s in trajectory.steps] == ["system", "user", "user", "agent", "agent", "agent"]
    read, work, final = trajectory.steps[3], trajectory.steps[4], trajectory.steps[5]
    assert "Reading the skill" in read.reasoning_content
    assert read.tool_calls[0].arguments["cmd"].endswith("ledger-total/SKILL.md")
    assert read.observation.results[0].content.startswith("---\nname: ledger-total")
    assert read.metrics.prompt_tokens == 5200 and read.metrics.cached_tokens == 3000
    assert read.metrics.extra["reasoning_output_tokens"] == 120
    assert [c.tool_call_id for c in work.tool_calls] == ["call_A2", "call_A3"]
    assert [r.content for r in work.observation.results] == ["42\n", "4 ledger.csv\n"]
    assert final.message == "Wrote 42 to /app/total.txt." and final.metrics.completion_tokens == 30
    assert trajectory.final_metrics.total_prompt_tokens == 17000
    assert trajectory.final_metrics.extra["total_token_usage"]["total_tokens"] == 17290
    assert explicit_skill_use(trajectory, "ledger-total")


def _miniswe_doc() -> dict:
    usage = {"prompt_tokens": 900, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 100}}
    return {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"mini_version": "2.4.6", "exit_status": "Submitted", "submission": "",
                 "model_stats": {"instance_cost": 0.0, "api_calls": 3},
                 "config": {"model": {"model_name": "openai/m"}, "agent_type": "x", "environment_type": "y"}},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "user", "content": "No tool calls found in the response.",
             "extra": {"interrupt_type": "FormatError",
                       "response": {"choices": [{"message": {"content": "thinking aloud"}}], "usage": usage}}},
            {"role": "assistant", "content": "list", "tool_calls": [],
             "extra": {"actions": [{"command": "ls", "tool_call_id": "c1"}], "response": {"usage": usage},
                       "cost": 0.0, "timestamp": 1778320000.5}},
            {"role": "tool", "tool_call_id": "c1", "content": "<returncode>0</returncode>",
             "extra": {"raw_output": "a", "returncode": 0}},
            {"role": "assistant", "content": "submit",
             "extra": {"actions": [{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "tool_call_id": "c2"}],
                       "response": {"usage": usage}}},
            {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}},
        ],
    }


def test_mini_swe_agent_format_errors_and_submission() -> None:
    trajectory = miniswe_to_atif(_miniswe_doc(), session_id="s")
    _clean(trajectory)
    assert [s.source for s in trajectory.steps] == ["system", "user", "agent", "user", "agent", "agent"]
    assert trajectory.steps[2].message == "thinking aloud" and trajectory.steps[2].extra == {"format_error": True}
    assert trajectory.steps[4].timestamp.startswith("2026-05-09")
    assert trajectory.steps[5].observation.results[0].content.startswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert trajectory.final_metrics.total_prompt_tokens == 2700


@pytest.mark.parametrize(
    ("convert", "records", "message"),
    [
        (claude_session_to_atif, [{"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}}], "unknown tool_use_id"),
        (claude_session_to_atif, [{"type": "summary"}], "no user or assistant"),
        (codex_rollout_to_atif, [{"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "x", "output": "y"}}], "unknown call_id"),
    ],
)
def test_broken_logs_raise_typed_errors(convert: object, records: list, message: str) -> None:
    with pytest.raises(ConversionError, match=message) as info:
        convert(records)  # type: ignore[operator]
    assert info.value.reason == "conversion"
    with pytest.raises(ConversionError, match="not JSON"):
        read_jsonl(["{", ""])
    with pytest.raises(ConversionError):
        miniswe_to_atif({"messages": []}, session_id="s")
    json.dumps(_miniswe_doc())
