"""Multi-step tasks as episodes (see :mod:`skillgym_core.multistep` for how the steps run): the
episode starts on the first step, prepared before its session opens; each finish grades the
current step with its own tests; while steps remain and the step met its gate, the next step is
prepared on the same workspace and a new session opens on it. The episode's reward is the steps'
rolled up as the task's strategy says."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import TaskConfig, TaskDir
from skillgym_core.errors import SkillGymError
from skillgym_core.multistep import StepOutcome, aggregate, layered_tests, prepare_step
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.taskrun import TaskRunner, VerifierOutcome


class StepNotReady(SkillGymError):
    """A step's setup or healthcheck failed before its agent could start."""

    reason = "step_not_ready"
    status = 503
    retryable = False


def start_step(runner: TaskRunner, task: TaskDir, index: int, workspace: Path) -> tuple[str, str]:
    """Prepare step ``index`` on ``workspace``: (its name, its instruction); raises StepNotReady."""
    config = runner.config(task).steps[index]
    step = task.step(config.name)
    error, detail = prepare_step(runner, task, step, config, workspace)
    if error is not None:
        raise StepNotReady(f"step {step.name} of {task.root.name} could not start: {detail}", step=step.name,
                           failure=error)  # fmt: skip
    return step.name, step.instruction()


def grade_step(runner: TaskRunner, task: TaskDir, name: str, workspace: Path, scratch: Path) -> StepOutcome:
    """The step's verdict from its own tests layered over the task's."""
    config = next(s for s in runner.config(task).steps if s.name == name)
    tests = Path(tempfile.mkdtemp(prefix=f"tests-{name}-", dir=scratch))
    try:
        verdict = runner.verify(task, workspace, tests=layered_tests(task.step(name), tests / "tests"),
                                timeout_s=config.verifier.timeout_sec)  # fmt: skip
    finally:
        discard_tree(tests)
    return StepOutcome(name, verdict, below_minimum=config.below_minimum(verdict.rewards, verdict.reward))


def verdict_record(outcome: StepOutcome) -> dict[str, Any]:
    verdict = outcome.verifier
    return {"name": outcome.name, "reward": verdict.reward if verdict else 0.0,
            "rewards": verdict.rewards if verdict else {}, "passed": bool(verdict and verdict.passed),
            "failure_type": verdict.failure_type if verdict else outcome.error,
            "below_min_reward": outcome.below_minimum, "error": outcome.error}  # fmt: skip


def _outcome(record: dict[str, Any]) -> StepOutcome:
    if record.get("error"):
        return StepOutcome(record["name"], None, record["error"])
    verdict = VerifierOutcome(float(record["reward"]), dict(record["rewards"]), bool(record["passed"]),
                              record.get("failure_type"), None)  # fmt: skip
    return StepOutcome(record["name"], verdict, below_minimum=bool(record.get("below_min_reward")))


def rolled_up(config: TaskConfig, verdicts: list[dict[str, Any]], last: VerifierOutcome | None,
              pass_threshold: float) -> VerifierOutcome:  # fmt: skip
    """The episode's verdict from its steps' (``last``: the live verdict of the step just graded,
    whose logs the stored rollout keeps)."""
    steps = [_outcome(record) for record in verdicts]
    stopped = next((s.name for s in steps if s.ends_trial), None)
    if stopped is None and len(steps) < len(config.steps):
        stopped = steps[-1].name if steps else None
    outcome = aggregate(config.reward_strategy, steps, pass_threshold, stopped)
    if last is not None:
        outcome.result = last.result
    return outcome
