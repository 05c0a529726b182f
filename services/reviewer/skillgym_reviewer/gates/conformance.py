"""Gate: the package follows the Harbor task format (see :mod:`skillgym_core.conformance`)."""

from __future__ import annotations

from skillgym_core.conformance import check_task
from skillgym_core.contracts.task import TaskDir

from skillgym_reviewer.report import GateResult


def conformance_gate(task: TaskDir) -> GateResult:
    issues = check_task(task.root)
    if not issues:
        return GateResult.ok("conformance")
    return GateResult.fail(
        "conformance",
        issues[0].failure_type,  # type: ignore[arg-type]
        [issue.message for issue in issues],
        issues=[issue.to_dict() for issue in issues],
    )
