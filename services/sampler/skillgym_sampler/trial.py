"""Run one trial end to end: fresh workspace, agent in its harness, trusted verifier on a fresh
copy, ATIF + verification record stored, metrics observed. A trial whose record is already stored
is answered from the store, so redelivery and resumed plans never rerun scored work."""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from skillgym_core import keys, metrics
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.contracts.events import TrajectoryVerified
from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild import EnvironmentProvider
from skillgym_core.errors import SkillGymError
from skillgym_core.multistep import StepOutcome
from skillgym_core.provenance import with_source
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.store.base import get_json, put_json
from skillgym_core.taskrun import TaskRunner

from skillgym_sampler.harness.base import AgentEnv, AgentRun, Harness, RunSpec
from skillgym_sampler.recorder import TrajectoryRecorder
from skillgym_sampler.skilluse import explicit_skill_use
from skillgym_sampler.steps import run_harness_steps

log = logging.getLogger(__name__)


def event_from_record(record: VerificationRecord, spec: RunSpec) -> TrajectoryVerified:
    return TrajectoryVerified(
        trajectory_id=record.trajectory_id,
        task_id=record.task_id,
        skill_id=spec.skill_id,
        harness=record.harness,
        model=record.model,
        prompt_variant=record.prompt_variant,
        skill_provided=record.skill_provided,
        passed=record.passed,
        reward=record.reward,
        failure_type=record.failure_type,
        atif_key=keys.trajectory_atif(record.trajectory_id),
        verification_key=keys.trajectory_verification(record.trajectory_id),
        category=spec.category,
    )


def stored_record(ctx: ServiceContext, trajectory_id: str) -> VerificationRecord | None:
    key = keys.trajectory_verification(trajectory_id)
    if not ctx.store.exists(key):
        return None
    return VerificationRecord.model_validate(get_json(ctx.store, key))


def _crash_trajectory(spec: RunSpec, harness: Harness, instruction: str, error: str) -> Trajectory:
    recorder = TrajectoryRecorder(
        session_id=spec.trajectory_id,
        trajectory_id=spec.trajectory_id,
        agent_name=spec.harness,
        agent_version=getattr(harness, "version", "unknown"),
        model_name=spec.model,
    )
    recorder.user(instruction)
    recorder.note(f"harness failed before producing a trajectory: {error}")
    return recorder.build()


def _step_summary(step: StepOutcome) -> dict[str, Any]:
    verdict = step.verifier
    return {
        "name": step.name, "reward": verdict.reward if verdict else None, "passed": bool(verdict and verdict.passed),
        "failure_type": verdict.failure_type if verdict else step.error, "below_min_reward": step.below_minimum,
        "agent_outcome": (step.act or {}).get("outcome"), "seconds": round(step.seconds, 4),
        "verify_seconds": round(step.verify_seconds, 4),
    }  # fmt: skip


class TrialRunner:
    def __init__(
        self,
        ctx: ServiceContext,
        *,
        pass_threshold: float = 1.0,
        command_timeout_s: float = 120.0,
        environment: EnvironmentProvider | None = None,
    ) -> None:
        self.ctx = ctx
        self.runner = TaskRunner(ctx.sandbox, pass_threshold=pass_threshold, environment=environment)
        self.command_timeout_s = command_timeout_s

    def run(self, task: TaskDir, spec: RunSpec, harness: Harness) -> TrajectoryVerified:
        existing = stored_record(self.ctx, spec.trajectory_id)
        if existing is not None:
            return event_from_record(existing, spec)
        metrics.RUNS_STARTED.labels(spec.harness, spec.model).inc()
        parent = Path(tempfile.mkdtemp(prefix="trial-", dir=self.ctx.scratch))
        try:
            return self._run(task, spec, harness, parent)
        finally:
            remove_tree(parent)

    def _run(self, task: TaskDir, spec: RunSpec, harness: Harness, parent: Path) -> TrajectoryVerified:
        started = time.perf_counter()
        workspace = self.runner.fresh_workspace(task, parent)
        skills = task.skills if spec.skill_provided and task.skills.is_dir() else None
        task_steps = None
        if self.runner.config(task).is_multi_step:
            steps = run_harness_steps(
                self.runner, task, workspace, harness, spec,
                lambda step: AgentEnv(task, workspace, self.runner, skills, command_timeout_s=self.command_timeout_s,
                                      step=step),
                lambda instruction, error: _crash_trajectory(spec, harness, instruction, error), scratch=parent,
            )  # fmt: skip
            run = AgentRun(steps.trajectory, outcome=steps.agent_outcome, error=steps.error)
            verified = steps.outcome.verifier
            task_steps = [_step_summary(step) for step in steps.outcome.steps]
            agent_s = max(0.0, time.perf_counter() - started - sum(step.verify_seconds for step in steps.outcome.steps))
        else:
            env = AgentEnv(task, workspace, self.runner, skills, command_timeout_s=self.command_timeout_s)
            try:
                run = harness.run(env, spec)
            except SkillGymError as exc:
                log.warning("harness failed", extra={"trajectory_id": spec.trajectory_id, "error": str(exc)})
                run = AgentRun(_crash_trajectory(spec, harness, task.instruction(), str(exc)),
                               outcome="harness_error", error=f"{exc.reason}: {exc}")
            agent_s = time.perf_counter() - started
            verified = self.runner.verify(task, workspace)
        verify_s = max(0.0, time.perf_counter() - started - agent_s)
        trajectory = with_source(run.trajectory, spec.source)
        conformance = validate_trajectory(trajectory)
        failure_type = verified.failure_type
        agent_outcome = run.outcome
        passed = verified.passed
        if not conformance.valid:
            agent_outcome, passed = "invalid_trajectory", False
            failure_type = failure_type or "invalid_trajectory"
        elif run.outcome == "harness_error":
            # the workspace may be right, but the trajectory shows none of the work that made it so:
            # no demonstration can come from it
            passed = False
            failure_type = failure_type or "harness_error"
        final = trajectory.final_metrics
        tokens = {
            "prompt": (final.total_prompt_tokens or 0) if final else 0,
            "completion": (final.total_completion_tokens or 0) if final else 0,
            "cached": (final.total_cached_tokens or 0) if final else 0,
        }
        tool_calls = sum(len(step.tool_calls or []) for step in trajectory.steps)
        result = verified.result
        record = VerificationRecord(
            trajectory_id=spec.trajectory_id,
            task_id=spec.task_id,
            harness=spec.harness,
            model=spec.model,
            prompt_variant=spec.prompt_variant,
            skill_provided=spec.skill_provided,
            reward=verified.reward,
            rewards=verified.rewards,
            passed=passed,
            failure_type=failure_type,
            agent_outcome=agent_outcome if run.error is None else f"{agent_outcome}: {run.error}"[:500],
            verifier_stdout=result.stdout[-4000:] if result else "",
            verifier_stderr=result.stderr[-4000:] if result else "",
            timings={"agent_s": round(agent_s, 4), "verify_s": round(verify_s, 4),
                     "total_s": round(time.perf_counter() - started, 4)},
            tokens=tokens,
            tool_calls=tool_calls,
            steps=len(trajectory.steps),
            skill_read=spec.skill_provided and explicit_skill_use(trajectory, spec.skill_name),
            skill_id=spec.skill_id,
            skill_name=spec.skill_name,
            category=spec.category,
            task_steps=task_steps,
            task_validated=spec.task_validated,
        )
        self.ctx.store.put_bytes(
            keys.trajectory_atif(spec.trajectory_id),
            trajectory.model_dump_json(exclude_none=True, indent=2).encode(),
            "application/json",
        )
        # the record is written last: its presence marks the trial as scored
        put_json(self.ctx.store, keys.trajectory_verification(spec.trajectory_id), record.model_dump(mode="json"))
        self._observe(spec, record)
        return event_from_record(record, spec)

    def _observe(self, spec: RunSpec, record: VerificationRecord) -> None:
        metrics.RUNS_FINISHED.labels(spec.harness, spec.model, spec.category or "unknown",
                                     str(record.passed).lower()).inc()
        metrics.RUN_SECONDS.labels(spec.harness).observe(record.timings.get("total_s", 0.0))
        metrics.TRAJECTORY_STEPS.labels(spec.harness).observe(record.steps)
        metrics.TRAJECTORY_TOOL_CALLS.labels(spec.harness).observe(record.tool_calls)
        metrics.TRAJECTORY_TOKENS.labels(spec.harness).observe(
            record.tokens.get("prompt", 0) + record.tokens.get("completion", 0)
        )
