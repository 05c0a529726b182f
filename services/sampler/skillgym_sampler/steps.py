"""Sampling a multi-step task: the harness runs once per step, in order, on one workspace, each
time with that step's instruction only (Harbor's steps share the environment, not the agent's
context); each step is graded by its own tests before the next one starts, and a step that misses
its ``min_reward`` ends the trial (see :mod:`skillgym_core.multistep`). The steps' trajectories
are joined into the trial's one ATIF trajectory, each part marked with its step's name."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.contracts.atif import FinalMetrics, Step, Trajectory
from skillgym_core.contracts.task import StepSection, TaskDir, TaskStep
from skillgym_core.errors import SkillGymError
from skillgym_core.multistep import MultiStepOutcome, run_steps
from skillgym_core.taskrun import TaskRunner

from skillgym_sampler.harness.base import AgentEnv, AgentRun, Harness, RunSpec

log = logging.getLogger(__name__)
CrashRecord = Callable[[str, str], Trajectory]


@dataclass
class StepsRun:
    outcome: MultiStepOutcome
    trajectory: Trajectory
    agent_outcome: str
    error: str | None
    parts: list[str] = field(default_factory=list)


def run_harness_steps(runner: TaskRunner, task: TaskDir, workspace: Path, harness: Harness, spec: RunSpec,
                      make_env: Callable[[TaskStep], AgentEnv], crashed: CrashRecord,
                      scratch: Path | None = None) -> StepsRun:  # fmt: skip
    """Every step of ``task`` acted on by ``harness``; ``crashed(instruction, error)`` is the
    trajectory recorded for a step whose harness failed before producing one."""
    runs: list[tuple[str, AgentRun]] = []

    def act(step: TaskStep, config: StepSection) -> dict[str, Any]:
        env = make_env(step)
        try:
            run = harness.run(env, spec)
        except SkillGymError as exc:
            log.warning("harness failed", extra={"trajectory_id": spec.trajectory_id, "step": step.name,
                                                 "error": str(exc)})  # fmt: skip
            run = AgentRun(crashed(env.instruction, str(exc)), outcome="harness_error", error=f"{exc.reason}: {exc}")
        runs.append((step.name, run))
        return {"outcome": run.outcome, "error": run.error}

    outcome = run_steps(runner, task, workspace, act, scratch=scratch)
    failed = next(((name, run) for name, run in runs if run.error is not None or run.outcome != "ok"), None)
    agent_outcome = failed[1].outcome if failed else "ok"
    error = f"step {failed[0]}: {failed[1].error}" if failed and failed[1].error else None
    if not runs:  # the first step never reached its agent: the trial's record still needs a trajectory
        first = task.steps()[0]
        runs.append((first.name, AgentRun(crashed(first.instruction(), outcome.verifier.detail or "step not started"),
                                          outcome="step_not_started")))  # fmt: skip
        agent_outcome = "step_not_started"
    trajectory = join_trajectories([(name, run.trajectory) for name, run in runs])
    return StepsRun(outcome, trajectory, agent_outcome, error, [name for name, _ in runs])


def _total(values: list[int | float | None]) -> Any:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def join_trajectories(parts: list[tuple[str, Trajectory]]) -> Trajectory:
    """One trajectory of the parts' steps in order, renumbered, each part's first step marked with
    its task step (``extra.task_step``) and the totals summed."""
    steps: list[Step] = []
    marks: list[dict[str, Any]] = []
    for name, part in parts:
        marks.append({"name": name, "first_step_id": len(steps) + 1, "steps": len(part.steps)})
        for index, step in enumerate(part.steps):
            extra = {**(step.extra or {}), "task_step": name} if index == 0 else step.extra
            steps.append(step.model_copy(update={"step_id": len(steps) + 1, "extra": extra}))
    first = parts[0][1]
    metrics = [p.final_metrics for _, p in parts if p.final_metrics is not None]
    final = FinalMetrics(
        total_prompt_tokens=_total([m.total_prompt_tokens for m in metrics]),
        total_completion_tokens=_total([m.total_completion_tokens for m in metrics]),
        total_cached_tokens=_total([m.total_cached_tokens for m in metrics]),
        total_cost_usd=_total([m.total_cost_usd for m in metrics]),
        total_steps=len(steps),
    )
    notes = "\n".join(f"[{name}] {p.notes}" for name, p in parts if p.notes) or None
    return Trajectory(
        schema_version=first.schema_version, session_id=first.session_id, trajectory_id=first.trajectory_id,
        agent=first.agent, steps=steps, notes=notes, final_metrics=final,
        extra={**(first.extra or {}), "task_steps": marks},
    )  # fmt: skip
