"""Evaluation on held-out skills only, and its paired tables: base vs student on the same tasks,
with vs without the skill, each with McNemar's exact p."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillgym.cli import EXIT_ERROR, main
from skillgym.evaluation_split import EvaluationError, comparisons, held_out, train_skills


def _card(tmp_path: Path, **fields: Any) -> Path:
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "card.json").write_text(json.dumps({"name": "demo", **fields}))
    return dataset


def test_training_skills_are_read_from_the_dataset_card(tmp_path: Path) -> None:
    assert train_skills(_card(tmp_path, train_skills=["a", "b"], eval_skills=["c"])) == {"a", "b"}
    with pytest.raises(EvaluationError) as missing:
        train_skills(tmp_path / "nowhere")
    assert missing.value.reason == "dataset_not_found"
    old = tmp_path / "old"
    old.mkdir()
    (old / "card.json").write_text(json.dumps({"eval_skills": ["c"]}))
    with pytest.raises(EvaluationError) as unsplit:
        train_skills(old)
    assert unsplit.value.reason == "dataset_without_skill_split"


def test_a_training_skill_never_enters_the_evaluation() -> None:
    assert held_out({"a", "b", "c", "d"}, {"a", "b"}, None) == {"c", "d"}
    assert held_out({"a", "c"}, {"a"}, ["c"]) == {"c"}
    with pytest.raises(EvaluationError) as leaked:
        held_out({"a", "c"}, {"a"}, ["a", "c"])
    assert leaked.value.reason == "train_skill_in_evaluation" and leaked.value.details["skills"] == ["a"]


def _runs(passed_with: list[bool], passed_without: list[bool]) -> list[dict[str, Any]]:
    return [{"task_id": f"t{i}", "skill_provided": True, "passed": p} for i, p in enumerate(passed_with)] + [
        {"task_id": f"t{i}", "skill_provided": False, "passed": p} for i, p in enumerate(passed_without)]


def test_student_against_base_and_with_against_without_the_skill() -> None:
    base = _runs([False] * 8, [False] * 8)
    student = _runs([True] * 6 + [False] * 2, [True] + [False] * 7)
    report = comparisons({"base": base, "student": student})

    assert report["models"]["student"]["with_skill"] == {"tasks": 8, "passed": 6, "pass_rate": 0.75}
    contrast = report["models"]["student"]["skill_contrast"]
    assert (contrast["only_with"], contrast["only_without"], contrast["both"], contrast["neither"]) == (5, 0, 1, 2)
    assert contrast["p_value"] == pytest.approx(2 / 2**5)

    versus = report["versus_base"]["student"]
    assert (versus["with_skill"]["only_student"], versus["with_skill"]["only_base"]) == (6, 0)
    assert versus["with_skill"]["p_value"] == pytest.approx(2 / 2**6) and versus["with_skill"]["p_value"] < 0.05
    assert versus["without_skill"]["only_student"] == 1 and versus["without_skill"]["p_value"] == 1.0


def test_repeated_runs_of_a_task_count_once() -> None:
    runs = [{"task_id": "t", "skill_provided": True, "passed": False}, {"task_id": "t", "skill_provided": True, "passed": True}]
    assert comparisons({"m": runs})["models"]["m"]["with_skill"] == {"tasks": 1, "passed": 1, "pass_rate": 1.0}


def test_evaluating_on_a_training_skill_is_one_typed_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    (run / "store" / "tasks").mkdir(parents=True)
    dataset = _card(tmp_path, train_skills=["skill-a"], eval_skills=["skill-b"])
    argv = ["evaluate", str(run), "--model", f"m={tmp_path}", "--dataset", str(dataset), "--skill", "skill-a",
            "--out", str(tmp_path / "out")]
    assert main(argv) == EXIT_ERROR
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: train_skill_in_evaluation: ") and "skill-a" in line
