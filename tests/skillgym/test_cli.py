"""The command line: arguments, errors a newcomer meets, and the stage commands it offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.cli import build_parser, main
from skillgym.wiring import UnknownServiceError, create_service, environment


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
