"""Stage commands run end to end through the real services' entry points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgym.cli import main
from tests.validator.tasks import make_task

ALWAYS_PASS = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"


def test_validate_prints_one_json_record_per_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = make_task(tmp_path / "good", name="good")
    lax = make_task(tmp_path / "lax", name="lax", test_sh=ALWAYS_PASS)

    code = main(["validate", str(good.root), str(lax.root), "--json"])

    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert code == 1
    assert len(records) == 2
    by_valid = {record["valid"]: record for record in records}
    assert by_valid[True]["label"] in {"verifier-passed", "skill-dep", "unlabelled"}
    assert any("nop_passes" in reason for reason in by_valid[False]["reasons"])


@pytest.mark.slow
def test_run_then_report_writes_html_json_and_plots(tmp_path: Path) -> None:
    from skillgym.embedded import EmbeddedOptions, run_pipeline
    from tests.e2e.conftest import EXAMPLE_SKILLS

    run_pipeline([EXAMPLE_SKILLS / "config-merge"], tmp_path / "run", EmbeddedOptions(train=False))
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), "--include-reference"]) == 0

    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert (tmp_path / "report" / "report.html").read_text().count("<img") >= 1
    assert list((tmp_path / "report").glob("*.png"))
    assert report
