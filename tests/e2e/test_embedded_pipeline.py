"""The whole pipeline in one process on the example skills the repository ships."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.bus.record_log import EVENT_LOG_DIR, read_record_log
from skillgym_core.contracts.cloudevents import record_mode
from skillgym_core.contracts.topics import ALL_TOPICS, ENV_FEEDBACK, HARDENING_REQUESTED

from skillgym.embedded import EmbeddedOptions, run_pipeline
from tests.e2e.conftest import EXAMPLE_SKILLS, STAGE_COUNTS
from tests.support.event_contracts import violations
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_embedded_pipeline_counts_every_stage_and_loss_falls(
    tmp_path: Path, scripted_teacher: ScriptedLLMServer
) -> None:
    result = run_pipeline([EXAMPLE_SKILLS], tmp_path / "run", EmbeddedOptions(llm_base_url=scripted_teacher.base_url))
    summary = result.summary

    for field in STAGE_COUNTS:
        assert summary[field] > 0, f"{field} is zero: {summary}"
    assert (summary["skills_seen"], summary["skills_accepted"]) == (4, 3)
    assert summary["trajectories_attempted"] >= 2 * summary["tasks_validated"]
    assert summary["trajectories_passed"] <= summary["trajectories_attempted"]
    assert summary["training_loss_last"] < summary["training_loss_first"]
    assert summary["dead_letters"] == 0
    assert {"oracle", "builtin"} <= set(summary["by_harness"])
    assert scripted_teacher.requests, "the built-in agent never called the endpoint"

    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert {key: written[key] for key in STAGE_COUNTS} == {key: summary[key] for key in STAGE_COUNTS}
    assert (tmp_path / "run" / "ingest" / "skills.jsonl").is_file()
    funnel = json.loads((tmp_path / "run" / "funnel.json").read_text())
    assert funnel["ingest"]["accepted"] == summary["skills_accepted"]
    built = sum(stages["built"] for stages in funnel["build"]["tasks_by_family"].values())
    assert built == summary["tasks_built"] == funnel["tasks"]["tasks_built"]
    skipped = sum(funnel["build"]["skills_skipped_by_reason"].values())
    assert skipped <= funnel["build"]["skills_without_task"]

    kept = [record for topic in ALL_TOPICS for record, _ in read_record_log(tmp_path / "run" / EVENT_LOG_DIR, topic)]
    assert {record.topic for record in kept} >= set(ALL_TOPICS) - {ENV_FEEDBACK, HARDENING_REQUESTED}
    assert {record_mode(record.headers) for record in kept} == {"binary"}
    assert violations(kept) == []


def test_rerun_skips_finished_work_and_gives_the_same_counts(tmp_path: Path) -> None:
    options = EmbeddedOptions(train=False)
    first = run_pipeline([EXAMPLE_SKILLS], tmp_path / "run", options)
    second = run_pipeline([EXAMPLE_SKILLS], tmp_path / "run", options)
    assert {k: first.summary[k] for k in STAGE_COUNTS} == {k: second.summary[k] for k in STAGE_COUNTS}
    assert second.seconds < first.seconds
