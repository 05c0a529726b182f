"""Where each artifact lives in the store. Every key is derived from a content id."""

from __future__ import annotations


def skill_record(skill_id: str) -> str:
    return f"skills/{skill_id}/record.json"


def skill_files(skill_id: str) -> str:
    return f"skills/{skill_id}/files.tar.gz"


def task_package(task_id: str) -> str:
    return f"tasks/{task_id}/package.tar.gz"


def family_instruction(family_id: str, skill_id: str) -> str:
    """What ``family_id`` asked of ``skill_id`` (its builder's memory against repeating a task)."""
    return f"families/{family_id}/instructions/{skill_id}.json"


def family_instructions(family_id: str) -> str:
    return f"families/{family_id}/instructions/"


def task_review(task_id: str) -> str:
    return f"tasks/{task_id}/review.json"


def task_validation(task_id: str) -> str:
    return f"tasks/{task_id}/validation.json"


def trajectory_atif(trajectory_id: str) -> str:
    return f"trajectories/{trajectory_id}/atif.json"


def trajectory_verification(trajectory_id: str) -> str:
    return f"trajectories/{trajectory_id}/verification.json"


def dataset(dataset_id: str, name: str) -> str:
    return f"datasets/{dataset_id}/{name}"


def training_run(run_id: str, name: str) -> str:
    return f"training/{run_id}/{name}"


def sandbox_input(digest: str) -> str:
    """A content-addressed archive of a sandbox mount (shared by every run that mounts it)."""
    return f"sandbox/inputs/{digest}.tar.gz"


def sandbox_run(run_name: str, name: str = "") -> str:
    return f"sandbox/runs/{run_name}/{name}"


def event_done(service: str, event_id: str) -> str:
    """Where the worker records that ``service`` handled ``event_id`` (and the events it emitted)."""
    return f"state/{service}/done/{event_id}.json"


def dlq_replayed(topic: str, event_id: str) -> str:
    """Which dead letters of ``event_id`` (from ``topic``) were published back onto ``topic``."""
    return f"state/dlq/replayed/{topic}/{event_id}.json"
