"""The validity gate on a multi-step Harbor task, on the bubblewrap sandbox: the no-op run stops
at the first step's gate, each step's own reference solution carries the trial to reward 1, and a
step whose solution is wrong makes the task invalid, with the step named in the record."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner
from skillgym_validator.gate import ValidityGate

from tests.support.harbor_tasks import log_steps


@pytest.fixture
def gate() -> ValidityGate:
    return ValidityGate(TaskRunner(LocalSandbox(), judge=None), nop_runs=1, oracle_runs=1)


def test_a_multi_step_task_is_proven_step_by_step(gate: ValidityGate, tmp_path: Path) -> None:
    report = gate.check(TaskDir(log_steps(tmp_path / "task")), tmp_path)
    assert report.valid, report.to_dict()
    nop, oracle = report.runs
    assert nop.verifier["stopped_at"] == "count" and nop.verifier["failure_type"] == "step_below_min_reward"
    assert [s["name"] for s in oracle.verifier["steps"]] == ["count", "summarize"]
    assert oracle.verifier["reward"] == 1.0 and [s["step"] for s in (oracle.solution or {})["steps"]] == [
        "count", "summarize"]


def test_a_wrong_step_solution_or_a_missing_one_is_named(gate: ValidityGate, tmp_path: Path) -> None:
    root = log_steps(tmp_path / "task")
    (root / "steps/summarize/solution/solve.sh").write_text("#!/bin/bash\necho '{}' > summary.json\n")
    report = gate.check(TaskDir(root), tmp_path)
    assert not report.valid and report.reasons == ["oracle_fails: verifier_rejected"]
    assert [s["verifier"]["passed"] for s in report.runs[1].verifier["steps"]] == [True, False]
    (root / "steps/summarize/solution/solve.sh").unlink()
    assert gate.check(TaskDir(root), tmp_path).reasons == ["no_solution"]


def test_the_baseline_works_a_multi_step_task_one_conversation_per_step(tmp_path: Path) -> None:
    from skillgym_validator.settings import ValidatorSettings
    from skillgym_validator.validation import validate_task_dirs

    from tests.support.scripted_llm import Rules, ScriptedLLMServer, Sequence, bash

    # a model that knows the first step only: it counts the errors, then gives up on the summary
    model = Rules([("How many ERROR lines", Sequence([bash("grep -c '^ERROR' events.log > errors.txt")]))],
                  default=Sequence([], final="I do not know how."))
    with ScriptedLLMServer(model) as llm:
        settings = ValidatorSettings(baseline_base_url=llm.base_url, baseline_runs=1, oracle_runs=1, nop_runs=1)
        [record] = validate_task_dirs([log_steps(tmp_path / "task")], settings)
        users = [body["messages"][1]["content"] for body in llm.requests]
    assert record["valid"], record
    runs = record["contrast"]["runs"]
    # each run: the first step solved and graded 1, the second step's conversation on its own instruction
    assert [run["reward"] for run in runs] == [0.5, 0.5] and all(run["tool_calls"] == 1 for run in runs)
    assert sum("events.log has grown" in text for text in users) == 2
    assert all("/workspace" in body["messages"][0]["content"] for body in llm.requests)
