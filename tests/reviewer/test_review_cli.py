"""``skillgym review`` and ``skillgym verify`` on task directories: JSON records, a record for a
missing directory, exit codes, never a traceback."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from skillgym_core.errors import SkillGymError
from skillgym_core.sandbox.workspace import safe_copy_tree
from skillgym_reviewer import taskdir

from skillgym.cli import main
from tests.reviewer import catalogue


def _records(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_review_of_missing_directories_is_a_record_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing, not_dir = tmp_path / "missing", tmp_path / "file.txt"
    not_dir.write_text("x")
    assert main(["review", str(missing), str(not_dir), "--json"]) == 1
    records = _records(capsys.readouterr().out)
    assert [r["path"] for r in records] == [str(missing), str(not_dir)]
    assert all(r["passed"] is False and r["mutation"] is None for r in records)
    assert records[0]["error"]["reason"] == "task_dir_missing"  # type: ignore[index]
    assert records[1]["error"]["reason"] == "not_a_directory"  # type: ignore[index]
    assert main(["review", str(missing)]) == 1
    assert "ERROR" in capsys.readouterr().out


def test_a_reviewer_that_cannot_start_leaves_no_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unavailable(*args: object) -> None:
        raise SkillGymError("the environment cache cannot be opened")

    monkeypatch.setattr(taskdir, "TaskReviewer", unavailable)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert main(["review", str(tmp_path), "--json"]) == 1
    assert "cannot be opened" in capsys.readouterr().out
    assert list(scratch.iterdir()) == []


def test_bad_threshold_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["review", "x", "--threshold", "1.5"])
    assert exited.value.code == 2 and "must lie in [0, 1]" in capsys.readouterr().err


@pytest.mark.slow
def test_review_prints_one_record_per_task_with_gates_score_and_timings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = catalogue.write_task(tmp_path / "good").root
    lax = catalogue.write_task(tmp_path / "lax", count="anything").root
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "instruction.md").write_text("# nothing else here\n")
    code = main(["review", str(good), str(lax), str(broken), str(tmp_path / "gone"), "--json"])
    assert code == 1
    records = _records(capsys.readouterr().out)
    assert [r["path"] for r in records] == [str(good), str(lax), str(broken), str(tmp_path / "gone")]
    first, second, third, fourth = records
    assert first["passed"] is True and first["task_id"] == "task-good" and first["template"] == "catalogue"
    mutation = first["mutation"]
    assert isinstance(mutation, dict) and mutation["score"] >= 0.9 and set(mutation["items"]) == {"categories", "total", "count"}
    gates = [g["gate"] for g in first["gates"]]  # type: ignore[union-attr]
    assert gates[:4] == ["conformance", "verifier_confinement", "environment", "validity"] and "mutation" in gates and "equivalence_probes" in gates
    timings = first["timings"]
    assert isinstance(timings, dict) and timings["total_s"] > 0 and timings["mutation"] > 0
    assert second["passed"] is False and second["failure_type"] == "too_lax"
    assert "count" in second["mutation"]["unkilled_items"]  # type: ignore[index]
    assert any("leaf_nudge:$.count" in s for s in second["mutation"]["survivors"])  # type: ignore[index]
    assert third["passed"] is False and third["gates"][0]["gate"] == "conformance"  # type: ignore[index]
    assert fourth["error"]["reason"] == "task_dir_missing"  # type: ignore[index]

    assert main(["review", str(good), "--threshold", "1.0"]) == 1  # its one reordering survives
    assert main(["review", str(good), "--threshold", "0.5"]) == 0
    human = capsys.readouterr().out
    assert "FAIL task-good too_lax mutation score" in human and "PASS task-good mutation score" in human


@pytest.mark.slow
def test_verify_grades_a_given_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = catalogue.write_task(tmp_path / "task")
    workspace = tmp_path / "ws"
    safe_copy_tree(task.workspace, workspace, max_bytes=1 << 20, max_files=100)
    assert main(["verify", str(task.root), "--workspace", str(workspace), "--json"]) == 1
    rejected = json.loads(capsys.readouterr().out)
    assert rejected["passed"] is False and rejected["reward"] == 0.0
    assert rejected["rewards"] == {"categories": 0.0, "total": 0.0, "count": 0.0}

    (workspace / "out").mkdir()
    answer = dict(catalogue.EXPECTED, count=4)
    (workspace / "out" / "report.json").write_text(json.dumps(answer))
    assert main(["verify", str(task.root), "--workspace", str(workspace), "--json"]) == 1
    partial = json.loads(capsys.readouterr().out)
    assert partial["rewards"] == {"categories": 1.0, "total": 1.0, "count": 0.0} and partial["task_id"] == "task-task"

    (workspace / "out" / "report.json").write_text(json.dumps(catalogue.EXPECTED))
    assert main(["verify", str(task.root), "--workspace", str(workspace)]) == 0
    assert "PASS reward 1.000 (categories 1.00, total 1.00, count 1.00)" in capsys.readouterr().out

    assert main(["verify", str(task.root), "--workspace", str(tmp_path / "nowhere"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["reason"] == "task_dir_missing"
