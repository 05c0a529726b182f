"""Multi-step tasks, run as Harbor runs them: the steps in order in one environment (the same
workspace carries over), each step prepared (its ``workdir/`` merged into the working directory,
its ``setup.sh`` run, its healthcheck passed), then acted on (by an agent, the reference solution,
or nobody), then graded by its own tests layered over the task's. A step whose verdict misses its
``min_reward`` (a key the verifier did not report misses any floor), or whose verifier gave no
verdict, ends the trial. The trial's rewards are, as Harbor rolls them up, the per-key means
over the steps graded (``mean``: a missing key counts as 0, and the steps a stopped trial never
reached count for nothing) or the last step's (``final``: nothing, so 0, when that step never
reached its verifier); the trial's reward is read from them as from one ``reward.json``.

Unlike Harbor, a step whose verifier could not produce a verdict counts as 0 on every key in the
mean rather than being left out: a crashed checker never raises a trial's reward. Preparation runs in
the sandbox as the sandbox user, so the step's files land through the sandbox's view of the
workspace and never through a link an agent planted there."""

from __future__ import annotations

import math
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import StepSection, TaskDir, TaskStep
from skillgym_core.reward import overall_reward
from skillgym_core.sandbox.base import Mount, Outcome, SandboxResult
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

STEP_FILES = "/step"
SETUP_SCRIPT = "setup.sh"
SETUP_TIMEOUT_S = 300.0
# Merges the step's files into the working directory (its setup script left out), then runs it;
# plain ``sh``, ``cp`` and a shell loop, so that a busybox image does it too (bash where there is one).
_PREPARE = (
    f'for entry in {STEP_FILES}/* {STEP_FILES}/.[!.]* {STEP_FILES}/..?*; do'
    f' [ -e "$entry" ] && [ "$entry" != {STEP_FILES}/{SETUP_SCRIPT} ] && {{ cp -R -- "$entry" . || exit 1; }}; done;'
    f' if [ -f {STEP_FILES}/{SETUP_SCRIPT} ]; then'
    f' if command -v bash >/dev/null 2>&1; then bash {STEP_FILES}/{SETUP_SCRIPT}; else sh {STEP_FILES}/{SETUP_SCRIPT}; fi;'
    f' fi'
)
# a healthcheck command, in bash where the image has it
_SHELL = 'if command -v bash >/dev/null 2>&1; then exec bash -c "$0"; else exec sh -c "$0"; fi'


StepAction = Callable[[TaskStep, StepSection], dict[str, Any] | None]


@dataclass
class StepOutcome:
    name: str
    verifier: VerifierOutcome | None
    error: str | None = None  # step_setup_failed, step_healthcheck_failed: the step never reached its agent
    detail: str = ""
    act: dict[str, Any] | None = None
    below_minimum: bool = False
    seconds: float = 0.0  # the whole step: preparation, the agent's work and the verifier
    verify_seconds: float = 0.0

    @property
    def ends_trial(self) -> bool:
        """As in Harbor: a step that never reached its agent, one whose verdict misses its
        ``min_reward``, and one whose verifier gave no verdict end the trial there."""
        return self.error is not None or self.below_minimum or (self.verifier is not None and not self.verifier.judged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "error": self.error, "detail": self.detail[-2000:], "act": self.act,
            "below_min_reward": self.below_minimum, "seconds": round(self.seconds, 4),
            "verify_seconds": round(self.verify_seconds, 4),
            "verifier": self.verifier.to_dict() if self.verifier else None,
        }  # fmt: skip


@dataclass
class MultiStepOutcome:
    """The trial's verdict (``verifier``) and every step that ran, in order."""

    verifier: VerifierOutcome
    steps: list[StepOutcome] = field(default_factory=list)
    stopped_at: str | None = None  # the step that ended the trial early

    def to_dict(self) -> dict[str, Any]:
        return {**self.verifier.to_dict(), "steps": [s.to_dict() for s in self.steps], "stopped_at": self.stopped_at}


def layered_tests(step: TaskStep, into: Path) -> Path:
    """The tests the step's verifier sees at ``/tests``: the task's ``tests/``, then the step's
    own files over them (its ``test.sh`` wins)."""
    into.mkdir(parents=True, exist_ok=True)
    for source in (step.task.tests, step.tests):
        if source.is_dir():
            shutil.copytree(source, into, dirs_exist_ok=True, symlinks=True)
    into.chmod(0o755)
    return into


def prepare_step(runner: TaskRunner, task: TaskDir, step: TaskStep, config: StepSection,
                 workspace: Path) -> tuple[str | None, str]:  # fmt: skip
    """Merge the step's ``workdir/`` and run its setup, then wait for its healthcheck:
    (None, "") when the step may start, else (the failure, its detail)."""
    if step.workdir.is_dir():
        result = runner.run_in_environment(
            task, ["sh", "-c", _PREPARE],
            [Mount(workspace, runner.workdir(task), writable=True), Mount(step.workdir, STEP_FILES)], None,
            SETUP_TIMEOUT_S,
        )  # fmt: skip
        if not result.ok:
            return "step_setup_failed", _describe(result)
    if config.healthcheck is not None:
        return _healthcheck(runner, task, config, workspace)
    return None, ""


def _healthcheck(runner: TaskRunner, task: TaskDir, config: StepSection, workspace: Path) -> tuple[str | None, str]:
    check = config.healthcheck
    assert check is not None
    time.sleep(check.start_period_sec)
    mounts = [Mount(workspace, runner.workdir(task), writable=True)]
    result: SandboxResult | None = None
    for attempt in range(check.retries + 1):
        if attempt:
            time.sleep(check.interval_sec)
        result = runner.run_in_environment(task, ["sh", "-c", _SHELL, check.command], mounts, None, check.timeout_sec)
        if result.ok:
            return None, ""
    return "step_healthcheck_failed", _describe(result) if result else ""


def _describe(result: SandboxResult) -> str:
    status = f"exit {result.exit_code}" if result.outcome is Outcome.OK else result.outcome.value
    return f"{status}: {(result.stderr or result.stdout)[-1500:]}"


def run_steps(runner: TaskRunner, task: TaskDir, workspace: Path, act: StepAction | None = None,
              *, scratch: Path | None = None) -> MultiStepOutcome:  # fmt: skip
    """Every step of ``task`` on ``workspace`` in order (see the module docstring); ``act`` does
    the step's work (None: nothing is done, the no-op run)."""
    config = runner.config(task)
    outcomes: list[StepOutcome] = []
    stopped_at = None
    for step_config in config.steps:
        step = task.step(step_config.name)
        outcome = _run_step(runner, task, step, step_config, workspace, act, scratch)
        outcomes.append(outcome)
        if outcome.ends_trial:
            stopped_at = step.name
            break
    return MultiStepOutcome(aggregate(config.reward_strategy, outcomes, runner.pass_threshold, stopped_at),
                            outcomes, stopped_at)  # fmt: skip


def _run_step(runner: TaskRunner, task: TaskDir, step: TaskStep, config: StepSection, workspace: Path,
              act: StepAction | None, scratch: Path | None) -> StepOutcome:  # fmt: skip
    started = time.monotonic()
    error, detail = prepare_step(runner, task, step, config, workspace)
    if error is not None:
        return StepOutcome(step.name, None, error, detail, seconds=time.monotonic() - started)
    acted = act(step, config) if act is not None else None
    tests = Path(tempfile.mkdtemp(prefix=f"tests-{step.name}-", dir=scratch))
    verify_started = time.monotonic()
    try:
        verdict = runner.verify(task, workspace, tests=layered_tests(step, tests / "tests"),
                                timeout_s=config.verifier.timeout_sec)  # fmt: skip
    finally:
        discard_tree(tests)
    ended = time.monotonic()
    return StepOutcome(step.name, verdict, act=acted, below_minimum=config.below_minimum(verdict.rewards, verdict.reward),
                       seconds=ended - started, verify_seconds=ended - verify_started)  # fmt: skip


def aggregate(strategy: str, steps: list[StepOutcome], pass_threshold: float, stopped_at: str | None) -> VerifierOutcome:
    """The trial's verdict from its steps' (see the module docstring). A trial that stopped early
    never passes."""
    graded = [s.verifier for s in steps if s.verifier is not None]
    if not graded:
        return _never_graded(next((s for s in steps if s.error), None))
    last = graded[-1]
    tampered = sorted({path for verdict in graded for path in verdict.tampered})
    if tampered:
        # the inputs were changed in one step: no mean over the others may pay for that trial
        return VerifierOutcome.failed("tampered_inputs", last.result, tampered=tampered, detail=last.detail)
    if strategy == "final":
        if steps[-1].verifier is None:  # Harbor's final verdict is the last step's, graded or not
            return _never_graded(steps[-1])
        rewards = dict(last.rewards)
        reward = last.reward
    else:
        rewards = mean_rewards(graded)
        reward = overall_reward(rewards)
    failure = last.failure_type if strategy == "final" else next(
        (v.failure_type for v in graded if v.failure_type and v.failure_type != "verifier_rejected"), None)  # fmt: skip
    if stopped_at is not None:
        failure = failure or next((s.error for s in steps if s.error), None) or "step_below_min_reward"
    passed = failure is None and reward >= pass_threshold
    if not passed and failure is None:
        failure = "verifier_rejected"
    return VerifierOutcome(reward, rewards, passed, failure, last.result, detail=last.detail)


def mean_rewards(verdicts: list[VerifierOutcome]) -> dict[str, float]:
    """Per-key means over ``verdicts``, a missing key counting as 0; a verdict that stands in for
    a verifier that gave none counts 0 on every key rather than bringing in its ``reward`` key."""
    judged = [verdict.rewards if verdict.judged else {} for verdict in verdicts]
    keys = sorted({key for rewards in judged for key in rewards})
    means = {key: math.fsum(rewards.get(key, 0.0) for rewards in judged) / len(judged) for key in keys}
    return means or {"reward": 0.0}


def _never_graded(step: StepOutcome | None) -> VerifierOutcome:
    if step is None or not step.error:
        return VerifierOutcome.failed("no_steps")
    return VerifierOutcome.failed(step.error, detail=step.detail)
