"""``skillgym run --require-llm``: a builder agent that cannot build fails the run with one line,
after the summary is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgym.cli import main
from skillgym.embedded import EmbeddedOptions
from tests.e2e.conftest import EXAMPLE_SKILLS
from tests.support.services import free_port


def test_the_flag_sets_the_builder_setting() -> None:
    assert EmbeddedOptions(require_llm=True).env()["SKILLGYM_REQUIRE_LLM"] == "true"
    assert "SKILLGYM_REQUIRE_LLM" not in EmbeddedOptions().env()  # the environment's own setting stays


@pytest.mark.slow
def test_an_unreachable_builder_endpoint_fails_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["run", str(EXAMPLE_SKILLS / "config-merge"), "--out", str(out), "--no-train", "--no-local-model", "--require-llm",
                 "--builder-llm-base-url", f"http://127.0.0.1:{free_port()}/v1"])
    assert code != 0
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: llm_required: 1 build(s) failed under require_llm")
    assert "llm_unavailable" in errors[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks_built"] == 0 and summary["skills_skipped_by_reason"] == {"llm_required": 1}


def test_require_llm_without_a_builder_endpoint_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(EXAMPLE_SKILLS / "config-merge"), "--out", str(tmp_path / "run"), "--no-train", "--no-local-model",
                 "--require-llm"])
    assert code != 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: llm_required: require_llm is set but no builder LLM endpoint")
