"""The validity gate on real task directories in the real sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner
from skillgym_validator.gate import GateRun, ValidityGate
from skillgym_validator.settings import ValidatorSettings
from skillgym_validator.validation import summarize, validate_task_dirs

from tests.validator.tasks import make_task

ALWAYS_PASS = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"
NEVER_PASS = "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n"
# passes a correct answer only on a coin flip from the kernel's entropy pool
FLAKY = (
    "#!/bin/bash\ncoin=$(( $(od -An -N1 -tu1 /dev/urandom) % 2 ))\n"
    'if [ "$(cat /app/answer.txt 2>/dev/null)" = 7 ] && [ $coin = 0 ]; then r=1; else r=0; fi\n'
    "echo $r > /logs/verifier/reward.txt\n"
)
# accepts the correct answer; rejects anything else with a reward drawn afresh on every run
REJECTS_WITH_A_RANDOM_REWARD = (
    '#!/bin/bash\nif [ "$(cat /app/answer.txt 2>/dev/null)" = 7 ]; then echo 1 > /logs/verifier/reward.txt\n'
    "else echo \"0.$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')\" > /logs/verifier/reward.txt; fi\n"
)


@pytest.fixture(scope="module")
def runner() -> TaskRunner:
    return TaskRunner(LocalSandbox())


def test_good_task_is_valid_with_all_runs_logged(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    report = ValidityGate(runner).check(task, tmp_path)
    assert report.valid and report.reasons == []
    assert [(r.phase, r.passed) for r in report.runs] == [
        ("nop", False), ("nop", False), ("oracle", True), ("oracle", True)
    ]  # fmt: skip
    oracle = report.to_dict()["runs"][2]
    assert oracle["solution"]["outcome"] == "ok" and oracle["verifier"]["reward"] == 1.0


def test_always_pass_verifier_is_rejected(runner: TaskRunner, tmp_path: Path) -> None:
    report = ValidityGate(runner).check(make_task(tmp_path / "task", test_sh=ALWAYS_PASS), tmp_path)
    assert not report.valid and report.reasons == ["nop_passes"]


def test_never_pass_verifier_is_rejected(runner: TaskRunner, tmp_path: Path) -> None:
    report = ValidityGate(runner).check(make_task(tmp_path / "task", test_sh=NEVER_PASS), tmp_path)
    assert not report.valid and report.reasons == ["oracle_fails: verifier_rejected"]


# Harbor's hello-world shape: the verifier installs its test runner at run time
FETCHES_ITS_TOOLS = (
    "#!/bin/bash\ncurl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh\nsource $HOME/.local/bin/env\n"
    "uvx -p 3.13 -w pytest==8.4.1 pytest /tests/test_state.py && echo 1 > /logs/verifier/reward.txt"
    " || echo 0 > /logs/verifier/reward.txt\n"
)


def test_a_verifier_that_fetches_its_tools_is_reported_as_needing_the_network(runner: TaskRunner, tmp_path: Path) -> None:
    report = ValidityGate(runner).check(make_task(tmp_path / "task", test_sh=FETCHES_ITS_TOOLS), tmp_path)
    assert not report.valid and len(report.reasons) == 1, report.reasons
    assert report.reasons[0].startswith("verifier_needs_network: curl: (6) Could not resolve host"), report.reasons


def test_flaky_verifier_is_rejected(runner: TaskRunner, tmp_path: Path) -> None:
    # 20 oracle runs agree by chance with probability 2**-19
    report = ValidityGate(runner, oracle_runs=20).check(make_task(tmp_path / "task", test_sh=FLAKY), tmp_path)
    assert not report.valid and report.reasons == ["flaky_verifier"]


def test_a_verifier_flaky_on_the_untouched_workspace_is_invalid_under_the_default_settings(tmp_path: Path) -> None:
    # two nop runs draw the same reward with probability 2**-32
    task = make_task(tmp_path / "task", test_sh=REJECTS_WITH_A_RANDOM_REWARD)
    [record] = validate_task_dirs([task.root], ValidatorSettings())
    nops = [run for run in record["gate"]["runs"] if run["phase"] == "nop"]
    assert len(nops) == ValidatorSettings().nop_runs >= 2
    assert not any(run["verifier"]["passed"] for run in nops)
    assert not record["valid"] and record["reasons"] == ["flaky_verifier"]


def test_nop_verdicts_that_disagree_are_flaky_even_when_one_passes(runner: TaskRunner) -> None:
    gate = ValidityGate(runner)
    passing = GateRun("nop", 0, {"passed": True, "reward": 1.0, "failure_type": None})
    failing = GateRun("nop", 1, {"passed": False, "reward": 0.0, "failure_type": "verifier_rejected"})
    oracles = [GateRun("oracle", i, {"passed": True, "reward": 1.0, "failure_type": None}) for i in range(2)]
    assert gate._judge([passing, failing, *oracles]) == ["nop_passes", "flaky_verifier"]
    assert gate._judge([passing, passing, *oracles]) == ["nop_passes"]


def test_broken_solution_and_slow_verifier(runner: TaskRunner, tmp_path: Path) -> None:
    slow = make_task(tmp_path / "slow", test_sh="#!/bin/bash\nsleep 30\n", verifier_timeout_s=1)
    report = ValidityGate(runner, oracle_runs=1).check(slow, tmp_path)
    assert "nop_verifier_timeout" in report.reasons and "oracle_fails: verifier_timeout" in report.reasons
    hang = make_task(tmp_path / "hang", solve_sh="#!/bin/bash\nsleep 30\n", agent_timeout_s=1)
    report = ValidityGate(runner, oracle_runs=1).check(hang, tmp_path)
    assert report.reasons == ["oracle_solution_timeout"]


def test_invalid_layout_is_reported(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    (task.root / "solution" / "solve.sh").unlink()
    (task.root / "environment" / "Dockerfile").unlink()
    report = ValidityGate(runner).check(task, tmp_path)
    assert not report.valid and report.runs == []
    assert report.reasons == ["invalid_layout: missing environment/Dockerfile"]


def test_a_task_without_a_reference_solution_is_left_unvalidated(runner: TaskRunner, tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    (task.root / "solution" / "solve.sh").unlink()
    report = ValidityGate(runner).check(task, tmp_path)
    assert not report.valid and report.runs == [] and report.reasons == ["no_solution"]


def test_validate_task_dirs_batch_goes_on_after_bad_input(tmp_path: Path) -> None:
    good = make_task(tmp_path / "good")
    bad = make_task(tmp_path / "bad", test_sh=ALWAYS_PASS)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "task.toml").write_text("not = [valid")
    records = validate_task_dirs([good.root, broken, bad.root, tmp_path / "missing"], ValidatorSettings())
    assert [r["valid"] for r in records] == [True, False, False, False]
    assert records[0]["label"] == "verifier-passed" and records[0]["timings"]["gate_s"] > 0
    assert records[1]["reasons"] == ["error: task_format"]
    assert records[2]["reasons"] == ["nop_passes"] and records[2]["label"] == "unlabelled"
    assert records[3]["reasons"][0].startswith("error: ")
    summary = summarize(records)
    assert summary["valid"] == 1 and summary["mcnemar"] is None
