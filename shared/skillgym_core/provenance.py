"""Where a trajectory's agent turns came from: a model acting on the task, or the task's own
reference solution played back as agent steps. The label travels in the ATIF ``extra`` of a
trajectory and in every dataset record built from it."""

from __future__ import annotations

from typing import Any, Literal, get_args

from skillgym_core.contracts.atif import Trajectory

Source = Literal["reference", "model"]
SOURCES: tuple[Source, ...] = get_args(Source)
SOURCE_KEY = "source"
REFERENCE_HARNESSES = frozenset({"oracle", "nop"})


def source_of_harness(harness: str) -> Source:
    return "reference" if harness in REFERENCE_HARNESSES else "model"


def trajectory_source(trajectory: Trajectory, harness: str | None = None) -> Source:
    """The label stored in the trajectory; older trajectories without one are labelled by harness."""
    label = (trajectory.extra or {}).get(SOURCE_KEY)
    if label in SOURCES:
        return label
    return source_of_harness(harness or trajectory.agent.name)


def with_source(trajectory: Trajectory, source: Source) -> Trajectory:
    extra: dict[str, Any] = {**(trajectory.extra or {}), SOURCE_KEY: source}
    return trajectory.model_copy(update={"extra": extra})
