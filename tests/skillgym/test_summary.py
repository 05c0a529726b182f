"""Counts are computed from the events, each id counted once."""

from __future__ import annotations

from skillgym_core.contracts.events import (
    EnvBuilt,
    Envelope,
    EnvReviewed,
    EnvValidated,
    Payload,
    TrainingCompleted,
    TrajectoryVerified,
)

from skillgym.summary import summarize


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
