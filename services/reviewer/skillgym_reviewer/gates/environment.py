"""Gate: the task's environment is well-formed and builds.

The Dockerfile and ``environment/requirements.txt`` are linted (see
:mod:`skillgym_core.envbuild.dockerfile`); then the declared requirements are installed into
the cached environment every later run of the task mounts. Lint findings and a failed build
are both ``environment_error``, the build failure with the end of pip's log."""

from __future__ import annotations

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild import (
    DEFAULT_SKILL_DIRS,
    EnvironmentBuildError,
    EnvironmentProvider,
    declared_requirements,
    lint_environment,
)

from skillgym_reviewer.report import GateResult

GATE = "environment"
LOG_TAIL_IN_REASON = 1200


def environment_gate(
    task: TaskDir,
    provider: EnvironmentProvider | None,
    *,
    skill_dirs: tuple[str, ...] = DEFAULT_SKILL_DIRS,
) -> GateResult:
    findings = lint_environment(task, skill_dirs=skill_dirs)
    if findings:
        return GateResult.fail(
            GATE,
            "environment_error",
            [
                f"{finding.message} (Dockerfile line {finding.line})" if finding.line else finding.message
                for finding in findings
            ],
            findings=[finding.to_dict() for finding in findings],
        )
    requirements = declared_requirements(task)
    if requirements is None:
        return GateResult.ok(GATE, requirements=[])
    if provider is None:
        return GateResult.fail(
            GATE, "environment_error",
            ["the task declares environment/requirements.txt but this reviewer builds no environments"],
            requirements=list(requirements.lines),
        )  # fmt: skip
    try:
        prepared = provider.prepare(task, timeout_s=task.config().environment.build_timeout_sec)
    except EnvironmentBuildError as exc:
        tail = exc.log_tail.strip()
        reason = f"environment build failed ({exc.reason}): {exc}"
        if tail:
            reason += f"; pip log tail:\n{tail[-LOG_TAIL_IN_REASON:]}"
        return GateResult.fail(GATE, "environment_error", [reason], error=exc.to_dict(), log_tail=tail)
    if prepared is None:  # a provider may decide the task needs nothing beyond the base sandbox
        return GateResult.ok(GATE, requirements=list(requirements.lines))
    return GateResult.ok(GATE, **prepared.to_dict())
