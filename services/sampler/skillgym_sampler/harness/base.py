"""What a harness is: given a task environment and a run spec, drive an agent and return its ATIF record."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from skillgym_core.contracts.atif import Trajectory
from skillgym_core.contracts.task import TaskDir, TaskStep
from skillgym_core.ids import content_id
from skillgym_core.provenance import REFERENCE_HARNESSES, Source, source_of_harness
from skillgym_core.sandbox.base import SandboxResult
from skillgym_core.taskrun import SKILLS_MOUNT, TaskRunner

__all__ = ["REFERENCE_HARNESSES", "AgentEnv", "AgentRun", "Harness", "RunSpec", "format_observation"]


@dataclass(frozen=True)
class RunSpec:
    """One trial: which harness and model, which prompt variant, which attempt, skill given or withheld."""

    task_id: str
    skill_id: str
    skill_name: str
    harness: str
    model: str
    prompt_variant: str = "default"
    attempt: int = 1
    skill_provided: bool = True
    category: str | None = None
    task_validated: bool = True  # false: a task sampled without proof (it has no reference solution)

    @property
    def trajectory_id(self) -> str:
        return content_id(
            "traj",
            {
                "task_id": self.task_id,
                "harness": self.harness,
                "model": self.model,
                "prompt_variant": self.prompt_variant,
                "attempt": self.attempt,
                "skill_provided": self.skill_provided,
            },
        )

    @property
    def is_reference(self) -> bool:
        return self.harness in REFERENCE_HARNESSES

    @property
    def source(self) -> Source:
        """``reference`` for a played-back reference solution, ``model`` for an agent's own run."""
        return source_of_harness(self.harness)


@dataclass
class AgentEnv:
    """The agent's side of a task (of one step of a multi-step task): its workspace at the task's
    workdir and, when provided, the skills."""

    task: TaskDir
    workspace: Path
    runner: TaskRunner
    skills_dir: Path | None
    command_timeout_s: float = 120.0
    step: TaskStep | None = None

    @property
    def instruction(self) -> str:
        return self.step.instruction() if self.step is not None else self.task.instruction()

    @property
    def solution(self) -> Path:
        """The reference solution of the task, or of the step."""
        return self.step.solution if self.step is not None else self.task.solution

    @property
    def workdir(self) -> str:
        return self.runner.workdir(self.task)

    @property
    def skills_mount(self) -> str | None:
        return SKILLS_MOUNT if self.skills_dir is not None else None

    def bash(self, command: str, timeout_s: float | None = None) -> SandboxResult:
        return self.runner.run_agent_command(
            self.task,
            self.workspace,
            command,
            skills=self.skills_dir,
            timeout_s=timeout_s or self.command_timeout_s,
        )


@dataclass
class AgentRun:
    """What a harness hands back: the trajectory and how the agent's run ended."""

    trajectory: Trajectory
    outcome: str = "ok"
    error: str | None = None
    logs: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Harness(Protocol):
    name: str
    version: str

    def run(self, env: AgentEnv, spec: RunSpec) -> AgentRun: ...


def format_observation(result: SandboxResult, max_chars: int) -> str:
    """Exit status plus output, head and tail kept when it is too long for the model's context."""
    output = result.stdout
    if result.stderr:
        output = f"{output}\n[stderr]\n{result.stderr}" if output else f"[stderr]\n{result.stderr}"
    if len(output) > max_chars:
        half = max_chars // 2
        output = f"{output[:half]}\n[... {len(output) - 2 * half} characters elided ...]\n{output[-half:]}"
    status = f"exit_code: {result.exit_code}" if result.outcome.value == "ok" else f"outcome: {result.outcome.value}"
    return f"{status}\n{output}" if output else status
