"""The confinement gate refuses, as too lax, a task whose verifier runs the agent's code with its
own rights, and passes the same task once that code runs through the runner."""

from __future__ import annotations

from pathlib import Path

from skillgym_reviewer.gates.confinement import confinement_gate

from tests.core.test_verifier_code import DATA, HEAD
from tests.validator.tasks import make_task


def _task(tmp_path: Path, call: str):  # type: ignore[no-untyped-def]
    return make_task(tmp_path / "task", test_sh="#!/bin/bash\npython3 /tests/verify.py\n", extra_tests={
        "checks.py": (DATA / "checks.py").read_text(),
        "verify.py": HEAD + call + "run([('answer', lambda: open('/app/answer.txt').read().strip() == '7')])\n"})


def test_a_verifier_that_runs_agent_code_unconfined_is_too_lax(tmp_path: Path) -> None:
    gate = confinement_gate(_task(tmp_path, "import subprocess\nsubprocess.run(['bash', '/app/x.sh'])\n"))
    assert not gate.passed and gate.failure_type == "too_lax"
    assert gate.reasons == ["tests/verify.py:5: subprocess.run() runs outside run-untrusted"]
    assert gate.details["findings"] == [{"path": "tests/verify.py", "line": 5, "what": "subprocess.run()"}]


def test_the_same_verifier_through_the_runner_passes(tmp_path: Path) -> None:
    assert confinement_gate(_task(tmp_path, "run_untrusted(['bash', '/app/x.sh'])\n")).passed
