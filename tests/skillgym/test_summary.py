"""Counts are computed from the events, each id counted once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillgym_core.contracts.events import (
    EnvBuilt,
    Envelope,
    EnvReviewed,
    EnvValidated,
    Payload,
    TrainingCompleted,
    TrajectoryVerified,
)
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore

from skillgym.summary import read_build_reports, summarize, write_pipeline_funnel


def wrap(payload: Payload) -> Envelope:
    return Envelope.wrap(payload, producer="test", correlation_id="c")


def trajectory(tid: str, harness: str, passed: bool) -> TrajectoryVerified:
    return TrajectoryVerified(
        trajectory_id=tid, task_id="t1", skill_id="s1", harness=harness, model="m", passed=passed,
        reward=1.0 if passed else 0.0, atif_key="a", verification_key="v",
    )


def test_summary_counts_unique_ids_per_stage() -> None:
    events = [
        wrap(EnvBuilt(task_id="t1", skill_id="s1", package_key="p", template="x")),
        wrap(EnvBuilt(task_id="t1", skill_id="s1", package_key="p", template="x")),
        wrap(EnvBuilt(task_id="t2", skill_id="s1", package_key="p2", template="x")),
        wrap(EnvReviewed(task_id="t1", skill_id="s1", package_key="p", approved=True)),
        wrap(EnvReviewed(task_id="t2", skill_id="s1", package_key="p2", approved=False, reasons=["too lax"])),
        wrap(EnvValidated(task_id="t1", skill_id="s1", package_key="p", valid=True)),
        wrap(trajectory("r1", "oracle", True)),
        wrap(trajectory("r1", "oracle", True)),
        wrap(trajectory("r2", "nop", False)),
        wrap(TrainingCompleted(run_id="x", dataset_key="d", checkpoint_key="c", metrics_key="m",
                               examples=1, steps=3, loss_first=2.0, loss_last=1.0)),
    ]
    summary = summarize(events, skills_seen=4, skills_accepted=2)
    assert summary["tasks_built"] == 2
    assert summary["tasks_approved"] == 1
    assert summary["tasks_validated"] == 1
    assert summary["trajectories_attempted"] == 2
    assert summary["trajectories_passed"] == 1
    assert summary["dataset_examples"] == 1
    assert summary["by_harness"] == {"oracle": {"attempted": 1, "passed": 1}, "nop": {"attempted": 1, "passed": 0}}
    assert (summary["training_loss_first"], summary["training_loss_last"]) == (2.0, 1.0)


def test_summary_without_training_reports_zero_examples() -> None:
    summary = summarize([], skills_seen=0, skills_accepted=0)
    assert summary["dataset_examples"] == 0
    assert summary["training_loss_first"] is None


def test_summary_counts_tasks_per_builder_and_lists_fallbacks(tmp_path: Path) -> None:
    events = [
        wrap(EnvBuilt(task_id="t1", skill_id="s1", package_key="p1", template="x", builder="llm")),
        wrap(EnvBuilt(task_id="t2", skill_id="s2", package_key="p2", template="x", builder="family")),
        wrap(EnvBuilt(task_id="t3", skill_id="s2", package_key="p3", template="x", builder="family", revision=1)),
        wrap(EnvBuilt(task_id="t4", skill_id="s3", package_key="p4", template="y", builder="template")),
    ]
    reports: list[dict[str, Any]] = [
        {"outcome": "built", "skill_id": "s2", "task_id": "t2", "builder": "family"},
        {"outcome": "llm_fallback", "skill_id": "s2", "task_id": "t3", "family": "x", "revision": 1,
         "builder": "family", "error": "llm_malformed", "reason": "tool call 'bash' has unreadable arguments"},
        {"outcome": "llm_fallback", "skill_id": "s2", "task_id": "t2", "family": "x", "revision": 0,
         "builder": "family", "error": "llm_unavailable", "reason": "endpoint failed after 3 attempts"},
    ]
    summary = summarize(events, skills_seen=3, skills_accepted=3, build_reports=reports)
    assert summary["tasks_by_builder"] == {"family": 2, "llm": 1, "template": 1}
    assert [(f["task_id"], f["error"]) for f in summary["llm_fallbacks"]] == [("t2", "llm_unavailable"),
                                                                            ("t3", "llm_malformed")]
    assert summary["llm_fallbacks_by_error"] == {"llm_malformed": 1, "llm_unavailable": 1}
    write_pipeline_funnel(tmp_path / "funnel.json", {"accepted": 3}, summary)
    build = json.loads((tmp_path / "funnel.json").read_text())["build"]
    assert build["tasks_by_builder"] == summary["tasks_by_builder"]
    assert [f["reason"] for f in build["llm_fallbacks"]] == ["endpoint failed after 3 attempts",
                                                             "tool call 'bash' has unreadable arguments"]


def test_build_reports_include_the_fallback_records(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    put_json(store, "skills/s1/build.json", {"outcome": "built", "skill_id": "s1"})
    put_json(store, "skills/s1/fallbacks/t1.json", {"outcome": "llm_fallback", "skill_id": "s1", "task_id": "t1"})
    put_json(store, "skills/s1/notes.json", {"outcome": "other"})
    assert sorted(r["outcome"] for r in read_build_reports(store)) == ["built", "llm_fallback"]
