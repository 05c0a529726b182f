"""Judging many workspaces in one sandbox run gives each the verdict a run of its own gives:
passes, failures, a checker crash, a timeout, tampered inputs; nothing one judgement leaves
(files in /tmp, the checker's module state) reaches the next; a task whose verifier is not the
built-in runner is judged one run at a time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.builtin_verifier import runner_text, uses_builtin_runner
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox.base import SandboxResult
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

from tests.reviewer.handmade import ANSWER, write_task

VERIFY = """\
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import load_expected, read_json, run

EXPECTED = load_expected()
JUDGED = []  # module state: one judgement's must not be seen by the next
if os.path.exists("/app/out/crash"):
    raise RuntimeError("the checker itself broke")


def total():
    got = read_json("out/total.json")
    time.sleep(got.get("sleep", 0))
    if os.path.exists("/tmp/left-behind"):
        return False  # a file an earlier judgement left
    if got.get("litter"):
        open("/tmp/left-behind", "w").write("x")
    JUDGED.append(1)
    return len(JUDGED) == 1 and abs(float(got["total"]) - EXPECTED["total"]) < 0.005


def count():
    return int(read_json("out/total.json")["count"]) == EXPECTED["count"]


run([("total", total), ("count", count)])
"""
RUBRIC = [{"name": "total", "weight": 1.0}, {"name": "count", "weight": 1.0}]


def _builtin(files: dict[str, str]) -> None:
    files["tests/test.sh"] = runner_text("test.sh")
    files["tests/checks.py"] = runner_text("checks.py")
    files["tests/verify.py"] = VERIFY
    files["tests/rubric.json"] = json.dumps(RUBRIC)


def _answer(root: Path, **fields: Any) -> None:
    (root / "out").mkdir(parents=True, exist_ok=True)
    (root / "out" / "total.json").write_text(json.dumps({**ANSWER, **fields}))


CASES: list[tuple[str, Any]] = [
    ("right", lambda ws: _answer(ws)),
    ("wrong-total", lambda ws: _answer(ws, total=1.0)),
    ("litters-tmp", lambda ws: _answer(ws, litter=True)),
    ("right-after-litter", lambda ws: _answer(ws)),
    ("unreadable", lambda ws: (ws / "out").mkdir() or (ws / "out" / "total.json").write_text("{not json")),
    ("checker-crash", lambda ws: _answer(ws) or (ws / "out" / "crash").write_text("")),
    ("too-slow", lambda ws: _answer(ws, sleep=8)),
    ("tampered", lambda ws: _answer(ws) or (ws / "data.csv").write_text("item,amount\nfigs,1\n")),
    ("right-at-the-end", lambda ws: _answer(ws)),
]


def _workspaces(task: TaskDir, runner: TaskRunner, parent: Path) -> list[Path]:
    spaces = []
    for _, make in CASES:
        workspace = runner.fresh_workspace(task, parent)
        make(workspace)
        spaces.append(workspace)
    return spaces


def _verdict(outcome: VerifierOutcome) -> tuple[Any, ...]:
    return outcome.passed, outcome.reward, outcome.rewards, outcome.failure_type, outcome.tampered


@pytest.fixture
def counted_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    runs: list[list[str]] = []
    original = LocalSandbox.run

    def run(self: LocalSandbox, command: Any, **kwargs: Any) -> SandboxResult:
        runs.append(list(command))
        return original(self, command, **kwargs)

    monkeypatch.setattr(LocalSandbox, "run", run)
    return runs


def test_each_workspace_gets_the_verdict_a_run_of_its_own_gives(tmp_path: Path, counted_runs: list[list[str]]) -> None:
    task = write_task(tmp_path / "task", _builtin)
    assert uses_builtin_runner(task.tests)
    runner = TaskRunner(LocalSandbox())
    spaces = _workspaces(task, runner, tmp_path)
    alone = [runner.verify(task, workspace, timeout_s=3) for workspace in spaces]
    counted_runs.clear()
    together = runner.verify_many(task, spaces, timeout_s=3)
    assert [_verdict(o) for o in together] == [_verdict(o) for o in alone]
    assert len(counted_runs) == 1 and counted_runs[0][:2] == ["python3", "/opt/skillgym-bulk/driver.py"]
    by_case = dict(zip([name for name, _ in CASES], together, strict=True))
    assert by_case["right"].passed and by_case["right-after-litter"].passed and by_case["right-at-the-end"].passed
    assert by_case["wrong-total"].rewards["total"] == 0.0 and by_case["wrong-total"].rewards["count"] == 1.0
    assert by_case["too-slow"].failure_type == "verifier_timeout"
    assert by_case["tampered"].failure_type == "tampered_inputs"
    assert not by_case["checker-crash"].passed and by_case["checker-crash"].result is not None
    assert "the checker itself broke" in by_case["checker-crash"].result.stderr


def test_a_verifier_that_is_not_the_builtin_runner_is_judged_one_run_at_a_time(
        tmp_path: Path, counted_runs: list[list[str]]) -> None:
    task = write_task(tmp_path / "task")
    assert not uses_builtin_runner(task.tests)
    runner = TaskRunner(LocalSandbox())
    spaces = _workspaces(task, runner, tmp_path)[:4]
    together = runner.verify_many(task, spaces)
    assert len(counted_runs) == len(spaces) and all(run == ["bash", "/tests/test.sh"] for run in counted_runs)
    assert [o.passed for o in together] == [True, False, True, True]


def test_a_changed_runner_file_is_not_the_builtin_runner(tmp_path: Path) -> None:
    task = write_task(tmp_path / "task", _builtin)
    shutil.copy(task.tests / "checks.py", tmp_path / "checks.py")
    (task.tests / "checks.py").write_text(runner_text("checks.py").replace("def run(", "def run_(", 1))
    assert not uses_builtin_runner(task.tests)
