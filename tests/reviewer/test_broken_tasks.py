"""The reviewer rejects each hand-made broken task with the right type, and approves the good one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from skillgym_core.contracts.events import EnvBuilt, EnvFeedback, EnvReviewed
from skillgym_reviewer import ReviewerService

from tests.builder.skills import make_context, wrap
from tests.reviewer import handmade

CASES: list[tuple[str, Callable[[dict[str, str]], None] | None, bool, str | None, str]] = [
    ("good", None, True, None, ""),
    ("always-pass", handmade.always_pass, True, "too_lax", "untouched workspace"),
    ("passes-initial", handmade.passes_initial_state, True, "too_lax", "untouched workspace"),
    ("accepts-any-value", handmade.accepts_any_value, True, "too_lax", "corrupt-value:out/total.json"),
    ("rejects-alternative", handmade.rejects_valid_alternative, True, "too_strict", "json-indented"),
    ("trusts-agent-inputs", handmade.trusts_agent_inputs, False, "too_lax", "tampered-input-resolved:data.csv"),
    ("leaked-in-workspace", handmade.leaked_answer_in_workspace, True, "leakage", "expected_total.json"),
    ("leaked-in-instruction", handmade.leaked_answer_in_instruction, True, "leakage", "instruction.md"),
    ("solution-reachable", handmade.solution_reachable, True, "leakage", "/solution"),
    ("crashing-checker", handmade.crashing_checker, True, "checker_error", "verifier exited"),
    ("no-reward-file", handmade.no_reward_file, True, "checker_error", "reward"),
]


def _event(task_id: str, package_key: str) -> EnvBuilt:
    return EnvBuilt(task_id=task_id, skill_id="skill-ledger", package_key=package_key, template="handmade")


@pytest.mark.parametrize(("name", "edit", "protect", "failure_type", "reason_part"), CASES, ids=[c[0] for c in CASES])
def test_reviewer_verdict(
    tmp_path: Path,
    name: str,
    edit: Callable[[dict[str, str]], None] | None,
    protect: bool,
    failure_type: str | None,
    reason_part: str,
) -> None:
    ctx = make_context(tmp_path)
    task = handmade.write_task(tmp_path / name, edit, protect=protect)
    task_id = f"task-{name}"
    key = ctx.save_task(task_id, task)
    outputs = ReviewerService(ctx).handle(wrap(_event(task_id, key)))
    reviewed = outputs[0]
    assert isinstance(reviewed, EnvReviewed)
    if failure_type is None:
        assert reviewed.approved, reviewed.reasons
        assert len(outputs) == 1
        return
    assert not reviewed.approved
    assert reviewed.failure_type == failure_type, reviewed.reasons
    assert any(reason_part in reason for reason in reviewed.reasons), reviewed.reasons
    feedback = outputs[1]
    assert isinstance(feedback, EnvFeedback)
    assert feedback.failure_type == failure_type and feedback.attempt == 1
