"""A library of hand-made Harbor tasks with planted defects, for measuring the reviewer.

Every task is built by a function into a full task directory and tagged with its defect kind
and the failure type the reviewer must reject it with; sound tasks (kind ``good``) must be
approved. One module per kind; the sound drafts every defect is planted into are in
:mod:`.domains`."""

from __future__ import annotations

from tests.reviewer.defects import (
    agent_verdict,
    always_pass,
    flaky,
    good,
    ignored_constraint,
    leaked_answer,
    no_reward,
    reachable_solution,
    timeout,
    too_strict,
    trusts_agent_input,
    untouched_passes,
    weakened_check,
    wrong_value,
)
from tests.reviewer.defects.library import GOOD, LibraryTask

_DEFECT_MODULES = (
    always_pass,
    untouched_passes,
    wrong_value,
    weakened_check,
    ignored_constraint,
    too_strict,
    trusts_agent_input,
    leaked_answer,
    reachable_solution,
    flaky,
    agent_verdict,
    no_reward,
    timeout,
)

LIBRARY: tuple[LibraryTask, ...] = (*good.TASKS, *weakened_check.GOOD_TASKS, *(task for module in _DEFECT_MODULES for task in module.TASKS))
# kind -> the failure type its tasks must be rejected with (None: approved)
KINDS: dict[str, str | None] = {GOOD: None, **{module.KIND: module.FAILURE for module in _DEFECT_MODULES}}


def by_kind(kind: str) -> list[LibraryTask]:
    return [task for task in LIBRARY if task.kind == kind]


def smoke_subset() -> list[LibraryTask]:
    """The first task of every kind."""
    return [by_kind(kind)[0] for kind in KINDS]


__all__ = ["GOOD", "KINDS", "LIBRARY", "LibraryTask", "by_kind", "smoke_subset"]
