"""Every failure is a record: one task's crash never ends a validation batch, the task gets a
typed record, the other tasks go on, and scratch directories are removed."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SandboxError, TransientError
from skillgym_core.sandbox import janitor
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner, VerifierOutcome
from skillgym_validator import validation
from skillgym_validator.gate import ValidityGate, error_info, failure_reason
from skillgym_validator.settings import ValidatorSettings
from skillgym_validator.validation import validate_task_dirs

from skillgym.cli import main
from tests.support.scripted_llm import ScriptedLLMServer, Sequence, assistant, bash, tool_call
from tests.validator.tasks import make_task

HUGE_INTEGER_REWARD = '#!/bin/bash\necho \'{"reward": 1' + "0" * 400 + "}' > /logs/verifier/reward.json\n"


SCRATCH_PREFIXES = ("skillgym-validate-", "task-", "gate-", "ws-", "verify-")


@pytest.fixture
def scratch_dirs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """The validator's scratch directories made during the test; all gone by its end."""
    made: list[Path] = []
    mkdtemp = tempfile.mkdtemp

    def recording(*args: Any, **kwargs: Any) -> Any:
        path = mkdtemp(*args, **kwargs)
        if Path(path).name.startswith(SCRATCH_PREFIXES):
            made.append(Path(path))
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", recording)
    yield made
    janitor.wait_idle()
    assert made and [path for path in made if path.exists()] == []


def crash_verify_of(name: str, monkeypatch: pytest.MonkeyPatch, exc: Exception) -> None:
    """Make the verifier of the task directory called ``name`` raise ``exc``."""
    verify = TaskRunner.verify

    def crashing(self: TaskRunner, task: TaskDir, workspace: Path, **kwargs: Any) -> VerifierOutcome:
        if task.root.name == name:
            raise exc
        return verify(self, task, workspace, **kwargs)

    monkeypatch.setattr(TaskRunner, "verify", crashing)


def test_a_crashing_task_gets_a_record_and_the_batch_goes_on(
    tmp_path: Path, scratch_dirs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = make_task(tmp_path / "good", name="good")
    crashy = make_task(tmp_path / "crashy", name="crashy")
    crash_verify_of("crashy", monkeypatch, ZeroDivisionError("boom"))
    undecodable = tmp_path / "undecodable"
    undecodable.mkdir()
    (undecodable / "task.toml").write_bytes(b"\xff\xfe not UTF-8")
    huge = make_task(tmp_path / "huge", name="huge", test_sh=HUGE_INTEGER_REWARD)
    not_a_dir = tmp_path / "file.txt"
    not_a_dir.write_text("hello")
    paths = [good.root, crashy.root, undecodable, huge.root, not_a_dir, tmp_path / "missing", good.root]

    records = validate_task_dirs(paths, ValidatorSettings(oracle_runs=1))

    assert [r["path"] for r in records] == [str(p) for p in paths]
    assert [r["valid"] for r in records] == [True, False, False, False, False, False, True]
    crashed = records[1]
    assert crashed["task_id"] == "task-crashy" and crashed["label"] == "unlabelled"
    assert crashed["reasons"] == ["validator_crash: ZeroDivisionError: boom"]
    assert crashed["error"] == {"type": "ZeroDivisionError", "reason": "validator_crash", "message": "boom"}
    assert crashed["gate"]["error"]["type"] == "ZeroDivisionError" and crashed["gate"]["runs"] == []
    assert records[2]["reasons"][0].startswith("validator_crash: UnicodeDecodeError: ")
    assert records[2]["error"]["type"] == "UnicodeDecodeError" and records[2]["gate"] is None
    assert records[3]["reasons"]  # a hostile reward file fails the task, whatever reads it
    assert records[4]["reasons"] == ["error: NotADirectoryError"]
    assert records[5]["reasons"] == ["error: FileNotFoundError"]
    assert all(set(r["error"]) >= {"type", "reason", "message"} for r in records if "error" in r)
    json.dumps(records)


def test_the_gate_keeps_the_runs_before_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = make_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox())
    verify = TaskRunner.verify
    calls = []

    def second_call_fails(self: TaskRunner, task: TaskDir, workspace: Path, **kwargs: Any) -> VerifierOutcome:
        calls.append(workspace)
        if len(calls) == 2:
            raise SandboxError("the sandbox fell over", reason="sandbox_gone", node="n1")
        return verify(self, task, workspace, **kwargs)

    monkeypatch.setattr(TaskRunner, "verify", second_call_fails)
    report = ValidityGate(runner).check(task, tmp_path)
    assert not report.valid and report.reasons == ["error: sandbox_gone"]
    assert [(r.phase, r.passed) for r in report.runs] == [("nop", False)]
    assert report.to_dict()["error"] == {
        "type": "SandboxError",
        "reason": "sandbox_gone",
        "message": "the sandbox fell over",
        "details": {"node": "n1"},
    }
    janitor.wait_idle()
    assert not any(path.exists() for path in calls)


def test_a_transient_error_is_left_to_the_caller_to_retry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = make_task(tmp_path / "task")
    crash_verify_of("task", monkeypatch, TransientError("try again"))
    with pytest.raises(TransientError):
        ValidityGate(TaskRunner(LocalSandbox())).check(task, tmp_path)
    [record] = validate_task_dirs([task.root], ValidatorSettings())
    assert record["reasons"] == ["error: transient"] and record["error"]["type"] == "TransientError"


def test_a_validator_that_cannot_start_still_answers_for_every_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_sandbox(settings: ValidatorSettings) -> LocalSandbox:
        raise RuntimeError("no sandbox backend")

    monkeypatch.setattr(validation, "make_sandbox", no_sandbox)
    records = validate_task_dirs([tmp_path / "a", tmp_path / "b"], ValidatorSettings())
    assert [r["reasons"] for r in records] == [["validator_crash: RuntimeError: no sandbox backend"]] * 2


def test_failure_reasons_are_typed_and_bounded() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise ValueError("no")

    assert failure_reason(KeyError("x" * 5000)).startswith("validator_crash: KeyError: ")
    assert len(failure_reason(KeyError("x" * 5000))) < 300
    assert failure_reason(Unprintable()) == "validator_crash: Unprintable: <Unprintable with an unprintable message>"
    assert error_info(PermissionError(13, "denied"))["reason"] == "PermissionError"


def test_a_contrast_crash_keeps_the_gate_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_dirs: list[Path]
) -> None:
    task = make_task(tmp_path / "task", offset=1, skills={"adder": "OFFSET=1\n"})
    verify = TaskRunner.verify

    def agent_verify_crashes(self: TaskRunner, task: TaskDir, workspace: Path, **kwargs: Any) -> VerifierOutcome:
        if (workspace / "marker").exists():
            raise OverflowError("int too large to convert to float")
        return verify(self, task, workspace, **kwargs)

    monkeypatch.setattr(TaskRunner, "verify", agent_verify_crashes)
    with ScriptedLLMServer(Sequence([bash("touch marker")])) as llm:
        settings = ValidatorSettings(baseline_base_url=llm.base_url, baseline_runs=1, oracle_runs=1)
        [record] = validate_task_dirs([task.root], settings)
    assert not record["valid"] and record["label"] == "unlabelled"
    assert record["reasons"] == ["validator_crash: OverflowError: int too large to convert to float"]
    assert record["gate"]["valid"] is True and record["contrast"] is None


def test_hostile_tool_calls_are_answered_not_crashed_on(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", offset=1, skills={"adder": "OFFSET=1\n"})
    nested = {"id": "deep", "type": "function", "function": {"name": "bash", "arguments": "[" * 100_000}}
    odd = {"id": "odd", "type": "function", "function": "bash"}
    turns = [bash("echo a\x00b"), assistant("", [nested, odd, tool_call("bash", {"command": "true"})])]
    with ScriptedLLMServer(Sequence(turns)) as llm:
        settings = ValidatorSettings(
            baseline_base_url=llm.base_url, baseline_runs=1, oracle_runs=1, baseline_keep_transcripts=True
        )
        [record] = validate_task_dirs([task.root], settings)
    assert record["valid"], record["reasons"]
    tool_answers = [m["content"] for m in record["contrast"]["runs"][0]["transcript"] if m["role"] == "tool"]
    assert tool_answers[0] == "error: 'command' must not contain NUL bytes"
    assert tool_answers[1].startswith("error: arguments must be a JSON object")
    assert tool_answers[2].startswith("error: unknown tool")
    assert tool_answers[3].startswith("exit_code: 0")


def test_cli_validate_prints_a_record_for_every_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = make_task(tmp_path / "good", name="good")
    crashy = make_task(tmp_path / "crashy", name="crashy")
    crash_verify_of("crashy", monkeypatch, ValueError("[red]not markup[/nope]"))
    not_a_dir = tmp_path / "file.txt"
    not_a_dir.write_text("x")
    paths = [str(good.root), str(crashy.root), str(not_a_dir), str(tmp_path / "missing")]

    assert main(["validate", *paths, "--json"]) == 1
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [r["path"] for r in records] == paths
    assert [r["valid"] for r in records] == [True, False, False, False]

    assert main(["validate", *paths[1:]]) == 1
    err = capsys.readouterr().err
    assert "validator_crash: ValueError: [red]not markup[/nope]" in err and "Traceback" not in err
    assert main(["validate", str(good.root)]) == 0
    assert "task-good: valid" in capsys.readouterr().err
