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


def test_validate_names_each_task_by_its_id_or_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_task(tmp_path / "good", name="good")
    missing = tmp_path / "missing"

    assert main(["validate", str(good.root), str(missing)]) == 1

    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert "task-good: valid verifier-passed" in lines
    assert f"{missing}: INVALID unlabelled error: FileNotFoundError" in lines
    assert not any(line.startswith("?") for line in lines)
    assert captured.out == ""


def test_validate_json_stdout_is_only_json_lines_and_the_summary_goes_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_task(tmp_path / "good", name="good")
    missing = tmp_path / "missing"

    assert main(["validate", str(good.root), str(missing), "--json"]) == 1

    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert [(r["task_id"], r["path"], r["valid"]) for r in records] == [
        ("task-good", str(good.root), True), (None, str(missing), False)
    ]  # fmt: skip
    assert json.loads(captured.err) == {"tasks": 2, "valid": 1, "labels": {"verifier-passed": 1, "unlabelled": 1},
                                        "mcnemar": None}  # fmt: skip


def test_export_prints_examples_kept_rejected_by_reason_and_source_shares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from skillgym_core.store.local import LocalStore

    from tests.trainer.factories import populate

    populate(LocalStore(tmp_path / "run" / "store"))

    assert main(["export", str(tmp_path / "run"), "--out", str(tmp_path / "dataset")]) == 0

    err = capsys.readouterr().err
    counts = json.loads(err[err.index("{") :])
    card = json.loads((tmp_path / "dataset" / "card.json").read_text())
    train, evaluation = card["splits"]["train"]["examples"], card["splits"]["eval"]["examples"]
    assert counts["kept"] == {"train": train, "eval": evaluation, "total": train + evaluation} and train > 0
    assert counts["loaded"] == card["pipeline"]["loaded"] == 16
    assert counts["rejected"] == {"exact_duplicate": 1, "low_reward": 1, "near_duplicate": 1, "not_passed": 1}
    assert set(counts["sources"]) == {"reference", "model"}
    assert sum(source["examples"] for source in counts["sources"].values()) == train + evaluation
    assert sum(source["share"] for source in counts["sources"].values()) == pytest.approx(1.0)


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
