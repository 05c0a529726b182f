"""Pipeline counts, computed from the events themselves so embedded and distributed runs are
summarised by the same code."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skillgym_core.contracts.events import (
    EnvBuilt,
    Envelope,
    EnvReviewed,
    EnvValidated,
    TrainingCompleted,
    TrajectoryVerified,
)

SUMMARY_FIELDS = (
    "skills_seen",
    "skills_accepted",
    "tasks_built",
    "tasks_approved",
    "tasks_validated",
    "trajectories_attempted",
    "trajectories_passed",
    "dataset_examples",
)


def summarize(events: Iterable[Envelope], *, skills_seen: int, skills_accepted: int) -> dict[str, Any]:
    built: set[str] = set()
    approved: set[str] = set()
    validated: set[str] = set()
    attempted: set[str] = set()
    passed: set[str] = set()
    by_harness: dict[str, dict[str, int]] = {}
    training: TrainingCompleted | None = None
    for event in events:
        payload = event.payload
        if isinstance(payload, EnvBuilt):
            built.add(payload.task_id)
        elif isinstance(payload, EnvReviewed) and payload.approved:
            approved.add(payload.task_id)
        elif isinstance(payload, EnvValidated) and payload.valid:
            validated.add(payload.task_id)
        elif isinstance(payload, TrajectoryVerified):
            if payload.trajectory_id in attempted:
                continue
            attempted.add(payload.trajectory_id)
            stats = by_harness.setdefault(payload.harness, {"attempted": 0, "passed": 0})
            stats["attempted"] += 1
            if payload.passed:
                passed.add(payload.trajectory_id)
                stats["passed"] += 1
        elif isinstance(payload, TrainingCompleted):
            training = payload
    return {
        "skills_seen": skills_seen,
        "skills_accepted": skills_accepted,
        "tasks_built": len(built),
        "tasks_approved": len(approved),
        "tasks_validated": len(validated),
        "trajectories_attempted": len(attempted),
        "trajectories_passed": len(passed),
        "dataset_examples": training.examples if training else 0,
        "training_loss_first": training.loss_first if training else None,
        "training_loss_last": training.loss_last if training else None,
        "training_steps": training.steps if training else 0,
        "checkpoint_key": training.checkpoint_key if training else None,
        "by_harness": by_harness,
    }
