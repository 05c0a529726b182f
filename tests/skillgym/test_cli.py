"""The command line: arguments, errors a newcomer meets, and the stage commands it offers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from skillgym_core.store.local import LocalStore

from skillgym.cli import EXIT_ERROR, build_parser, main
from skillgym.wiring import UnknownServiceError, create_service, environment
from tests.trainer.factories import populate


def test_run_requires_an_output_directory() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "skills"])


def test_run_reports_a_missing_skill_source(tmp_path: Path) -> None:
    assert main(["run", str(tmp_path / "nope"), "--out", str(tmp_path / "out")]) == 2


def test_serve_only_accepts_known_services() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "kitchen-sink"])


def test_unknown_service_name_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UnknownServiceError, match="choose one of"):
        create_service("kitchen-sink", None)  # type: ignore[arg-type]


def test_environment_overrides_are_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setenv("SKILLGYM_X", "before")
    with environment({"SKILLGYM_X": "during", "SKILLGYM_Y": None}):
        assert os.environ["SKILLGYM_X"] == "during"
        assert "SKILLGYM_Y" not in os.environ
    assert os.environ["SKILLGYM_X"] == "before"


def _dataset(root: Path) -> Path:
    (root / "chat").mkdir(parents=True)
    row = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    (root / "chat" / "train.jsonl").write_text(json.dumps(row) + "\n")
    return root


def _empty_run(root: Path) -> Path:
    (root / "store" / "tasks").mkdir(parents=True)
    return root


def _populated_run(root: Path) -> Path:
    populate(LocalStore(root / "store"))
    return root


ERROR_CASES: dict[str, tuple[Callable[[Path], list[str]], str, str]] = {
    "export of a missing run directory": (
        lambda tmp: ["export", str(tmp / "nope"), "--out", str(tmp / "out")], "no_store", "no such run directory"),
    "export of a directory without a store": (
        lambda tmp: ["export", str(tmp), "--out", str(tmp / "out")], "no_store", "holds no store"),
    "export of a store with no trajectories": (
        lambda tmp: ["export", str(_empty_run(tmp / "run")), "--out", str(tmp / "out")], "nothing_to_curate",
        "no verified trajectory"),
    "export whose filters leave nothing": (
        lambda tmp: ["export", str(_populated_run(tmp / "run")), "--models", "nobody", "--out", str(tmp / "out")],
        "empty_curation", "model_excluded 14"),
    "train on a missing dataset": (
        lambda tmp: ["train", str(tmp / "nope"), "--out", str(tmp / "out")], "dataset_not_found",
        "no such dataset file or folder"),
    "train from a missing base model folder": (
        lambda tmp: ["train", str(_dataset(tmp / "ds")), "--base-model", str(tmp / "no-model"), "--out",
                     str(tmp / "out")], "base_model_not_found", "no-model"),
    "evaluate a missing run directory": (
        lambda tmp: ["evaluate", str(tmp / "nope"), "--model", f"m={tmp}", "--out", str(tmp / "out")], "no_store",
        "no such run directory"),
    "evaluate a missing model folder": (
        lambda tmp: ["evaluate", str(_empty_run(tmp / "run")), "--model", f"m={tmp / 'no-model'}", "--out",
                     str(tmp / "out")], "model_not_found", "no-model"),
    "evaluate a run without validated tasks": (
        lambda tmp: ["evaluate", str(_empty_run(tmp / "run")), "--model", f"m={tmp}", "--out", str(tmp / "out")],
        "no_validated_tasks", "no validated tasks"),
    "report on a missing run directory": (
        lambda tmp: ["report", str(tmp / "nope"), "--out", str(tmp / "out")], "no_store", "no such run directory"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_a_failing_command_prints_one_typed_line_not_a_traceback(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, reason, problem = ERROR_CASES[case]

    assert main(argv(tmp_path)) == EXIT_ERROR

    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith(f"error: {reason}: ") and problem in line
    assert "Traceback" not in captured.err + captured.out
