"""The offline skill-artifact dependence check: the reference solution runs once with the skill
mounted and once with the skill directory hidden. Where the instance claims the skill is
needed, the claim holds only if the first run passes the verifier and the second does not."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import AGENT_WORKDIR, TaskDir
from skillgym_core.envbuild import EnvironmentBuildError, EnvironmentProvider
from skillgym_core.sandbox.base import Limits, Mount, Sandbox
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.taskrun import TaskRunner, environment_failure

from skillgym_builder.families.base import SkillClaim


@dataclass(frozen=True)
class SolveRun:
    ran: bool  # the solution exited 0
    passed: bool
    reward: float
    failure: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "passed": self.passed, "reward": self.reward, "failure": self.failure}


class SkillDependenceChecker:
    def __init__(self, sandbox: Sandbox, environment: EnvironmentProvider | None, scratch: Path) -> None:
        self.runner = TaskRunner(sandbox, environment=environment, judge=None)
        self.scratch = scratch

    def _limits(self, task: TaskDir) -> Limits:
        config = self.runner.config(task)
        return Limits(
            wall_s=config.agent.timeout_sec, memory_mb=config.environment.memory_mb or 2048,
            cpus=float(config.environment.cpus) if config.environment.cpus else None,
            storage_mb=self.runner.storage_mb(task),
        )  # fmt: skip

    def _solve(self, task: TaskDir, *, with_skill: bool) -> SolveRun:
        self.scratch.mkdir(parents=True, exist_ok=True)
        parent = Path(tempfile.mkdtemp(prefix="dependence-", dir=self.scratch))
        try:
            workspace = self.runner.fresh_workspace(task, parent)
            if with_skill:
                result = self.runner.run_solution(task, workspace)
            else:
                try:
                    mounts, env = self.runner.environment_extras(task)
                except EnvironmentBuildError as exc:
                    result = environment_failure(exc)
                else:
                    result = self.runner.sandbox.run(
                        ["bash", "/solution/solve.sh"],
                        mounts=[Mount(workspace, AGENT_WORKDIR, writable=True), Mount(task.solution, "/solution"),
                                *mounts],
                        workdir=AGENT_WORKDIR, env=env, limits=self._limits(task),
                    )  # fmt: skip
            outcome = self.runner.verify(task, workspace)
            return SolveRun(result.ok, outcome.passed, outcome.reward, outcome.failure_type)
        finally:
            discard_tree(parent)

    def check(self, task: TaskDir, claim: SkillClaim) -> dict[str, Any]:
        with_skill = self._solve(task, with_skill=True)
        without_skill = self._solve(task, with_skill=False)
        holds = (with_skill.passed and not without_skill.passed) if claim.claimed else None
        return {
            "claimed": claim.claimed,
            "reason": claim.reason,
            "facts": sorted(claim.facts),
            "with_skill": with_skill.to_dict(),
            "without_skill": without_skill.to_dict(),
            "holds": holds,
        }
