"""The validity gate: the verifier must reject the untouched workspace (``v(x0) = 0``), accept
the reference solution (``v(rho) = 1``), and say the same thing every time it is asked.

Every run is recorded (phase, sandbox outcome, verifier verdict, log tails, timings) so a
rejected task can be debugged from its report alone."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import StepSection, TaskDir, TaskStep
from skillgym_core.errors import MalformedModelOutput, SkillGymError, TaskFormatError, TransientError
from skillgym_core.metrics import GATE_OUTCOMES
from skillgym_core.multistep import MultiStepOutcome, run_steps
from skillgym_core.sandbox.base import SandboxResult
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

from skillgym_validator.offline import network_failure

# A nop run may end without a reward file (the verifier found nothing to grade): that is
# still v(x0) = 0. A verifier that times out, is killed or tampers is not.
NOP_ACCEPTABLE_FAILURES = {"verifier_rejected", "reward_file_missing"}
# A multi-step task's no-op run may also stop at a step gate that checks the earlier steps' work.
NOP_ACCEPTABLE_FAILURES |= {"step_below_min_reward", "step_setup_failed", "step_healthcheck_failed"}
MAX_ERROR_MESSAGE_CHARS = 2000
VALIDATOR_CRASH = "validator_crash"
NO_SOLUTION = "no_solution"


def _message(exc: BaseException) -> str:
    try:
        return str(exc)[:MAX_ERROR_MESSAGE_CHARS]
    except Exception:  # an exception's own __str__ may fail; the record must still be written
        return f"<{type(exc).__name__} with an unprintable message>"


def _error_slug(exc: BaseException) -> str:
    if isinstance(exc, SkillGymError):
        return exc.reason
    return type(exc).__name__ if isinstance(exc, OSError) else VALIDATOR_CRASH


def failure_reason(exc: BaseException) -> str:
    """The typed reason a validation record gives for an exception: ``error: <reason>`` for the
    failures raised on purpose (a SkillGymError's reason, an OSError's type), else
    ``validator_crash: <ExceptionType>: <message>``."""
    slug = _error_slug(exc)
    if slug != VALIDATOR_CRASH:
        return f"error: {slug}"
    return f"{VALIDATOR_CRASH}: {type(exc).__name__}: {_message(exc)[:200]}"


def error_info(exc: BaseException) -> dict[str, Any]:
    """``{type, reason, message}`` (and a SkillGymError's details) of an exception, for a record."""
    info: dict[str, Any] = {"type": type(exc).__name__, "reason": _error_slug(exc), "message": _message(exc)}
    if isinstance(exc, SkillGymError) and exc.details:
        info["details"] = exc.details
    return info


@dataclass
class GateRun:
    phase: str
    index: int
    verifier: dict[str, Any]
    solution: dict[str, Any] | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return bool(self.verifier.get("passed"))


@dataclass
class GateReport:
    valid: bool
    reasons: list[str]
    runs: list[GateRun] = field(default_factory=list)
    seconds: float = 0.0
    error: dict[str, Any] | None = None  # what stopped the gate early (see ``error_info``)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "reasons": self.reasons,
            "seconds": round(self.seconds, 4),
            "runs": [
                {
                    "phase": r.phase,
                    "index": r.index,
                    "seconds": round(r.seconds, 4),
                    "solution": r.solution,
                    "verifier": r.verifier,
                }
                for r in self.runs
            ],
            **({"error": self.error} if self.error is not None else {}),
        }


def _tail(text: str, chars: int) -> str:
    return text[-chars:] if chars else ""


def _solution_record(result: SandboxResult, tail: int) -> dict[str, Any]:
    return {
        "outcome": result.outcome.value,
        "exit_code": result.exit_code,
        "duration_s": round(result.duration_s, 4),
        "truncated": result.truncated,
        "stdout": _tail(result.stdout, tail),
        "stderr": _tail(result.stderr, tail),
        "detail": result.detail,
    }


def _verifier_record(outcome: VerifierOutcome, tail: int) -> dict[str, Any]:
    record = outcome.to_dict()
    record["stdout"] = _tail(str(record["stdout"]), tail)
    record["stderr"] = _tail(str(record["stderr"]), tail)
    return record


DEFAULT_NOP_RUNS = 2
DEFAULT_ORACLE_RUNS = 2


class ValidityGate:
    """``nop_runs`` and ``oracle_runs`` of at least 2 also catch a verifier whose verdict on the
    same workspace changes from run to run."""

    def __init__(
        self,
        runner: TaskRunner,
        *,
        nop_runs: int = DEFAULT_NOP_RUNS,
        oracle_runs: int = DEFAULT_ORACLE_RUNS,
        log_tail_chars: int = 4000,
    ):
        self.runner = runner
        self.nop_runs = nop_runs
        self.oracle_runs = oracle_runs
        self.tail = log_tail_chars

    def _nop(self, task: TaskDir, scratch: Path, index: int) -> GateRun:
        started = time.monotonic()
        workspace = self.runner.fresh_workspace(task, scratch)
        try:
            if self.runner.config(task).is_multi_step:
                steps = run_steps(self.runner, task, workspace, scratch=scratch)
                return GateRun("nop", index, self._steps_record(steps), seconds=time.monotonic() - started)
            verdict = self.runner.verify(task, workspace)
        finally:
            self.runner.discard_workspace(workspace)
        return GateRun("nop", index, _verifier_record(verdict, self.tail), seconds=time.monotonic() - started)

    def _steps_record(self, outcome: MultiStepOutcome) -> dict[str, Any]:
        record = _verifier_record(outcome.verifier, self.tail)
        record["steps"] = [step.to_dict() for step in outcome.steps]
        record["stopped_at"] = outcome.stopped_at
        return record

    def _oracle_steps(self, task: TaskDir, scratch: Path, index: int, started: float) -> GateRun:
        """Each step's own reference solution, in order, on one workspace."""
        workspace = self.runner.fresh_workspace(task, scratch)
        default_timeout = self.runner.config(task).agent.timeout_sec
        solutions: list[dict[str, Any]] = []

        def solve(step: TaskStep, config: StepSection) -> dict[str, Any]:
            result = self.runner.run_solution(task, workspace, solution=step.solution,
                                              timeout_s=config.agent.timeout_sec or default_timeout)  # fmt: skip
            solutions.append({"step": step.name, **_solution_record(result, self.tail)})
            return {"outcome": result.outcome.value, "exit_code": result.exit_code}

        try:
            steps = run_steps(self.runner, task, workspace, solve, scratch=scratch)
        finally:
            self.runner.discard_workspace(workspace)
        failed = next((s for s in solutions if s["outcome"] != "ok"), None)
        summary = {"outcome": failed["outcome"] if failed else "ok", "steps": solutions}
        return GateRun("oracle", index, self._steps_record(steps), solution=summary,
                       seconds=time.monotonic() - started)  # fmt: skip

    def _oracle(self, task: TaskDir, scratch: Path, index: int) -> GateRun:
        started = time.monotonic()
        if self.runner.config(task).is_multi_step:
            return self._oracle_steps(task, scratch, index, started)
        workspace = self.runner.fresh_workspace(task, scratch)
        try:
            solution = self.runner.run_solution(task, workspace)
            verdict = self.runner.verify(task, workspace)
        finally:
            self.runner.discard_workspace(workspace)
        return GateRun(
            "oracle",
            index,
            _verifier_record(verdict, self.tail),
            solution=_solution_record(solution, self.tail),
            seconds=time.monotonic() - started,
        )

    def check(self, task: TaskDir, scratch: Path) -> GateReport:
        """The gate's verdict. A run that raises ends the gate with a failed report holding the
        runs so far and the error; only a TransientError or a model's malformed answer propagates, for the caller to retry."""
        started = time.monotonic()
        problems = task.check_layout()
        if problems:
            report = GateReport(False, [f"invalid_layout: {p}" for p in problems])
            GATE_OUTCOMES.labels("layout", "fail", "invalid_layout").inc()
            return report
        solutions = [s.solution for s in task.steps()] or [task.solution]
        if not all((solution / "solve.sh").is_file() for solution in solutions):
            # a task that ships no reference (as Harbor tasks may) can be sampled, never proven
            GATE_OUTCOMES.labels("layout", "fail", NO_SOLUTION).inc()
            return GateReport(False, [NO_SOLUTION])
        runs: list[GateRun] = []
        try:
            tmp = Path(tempfile.mkdtemp(prefix="gate-", dir=scratch))
            try:
                for i in range(self.nop_runs):
                    runs.append(self._nop(task, tmp, i))
                for i in range(self.oracle_runs):
                    runs.append(self._oracle(task, tmp, i))
            finally:
                discard_tree(tmp)
        except (TransientError, MalformedModelOutput):
            raise
        except Exception as exc:
            GATE_OUTCOMES.labels("runs", "fail", _error_slug(exc)).inc()
            return GateReport(False, [failure_reason(exc)], runs, time.monotonic() - started, error=error_info(exc))
        reasons = self._judge(runs)
        report = GateReport(not reasons, reasons, runs, time.monotonic() - started)
        return report

    def _judge(self, runs: list[GateRun]) -> list[str]:
        nops = [r for r in runs if r.phase == "nop"]
        oracles = [r for r in runs if r.phase == "oracle"]
        reasons: list[str] = []
        nop_reasons = []
        for run in nops:
            failure = run.verifier.get("failure_type")
            if run.passed:
                nop_reasons.append("nop_passes")
            elif failure not in NOP_ACCEPTABLE_FAILURES:
                nop_reasons.append(f"nop_{failure}")
        self._count("nop", nop_reasons)
        reasons += sorted(set(nop_reasons))

        oracle_reasons = []
        passes = [r.passed for r in oracles]
        rewards = {r.verifier.get("reward") for r in oracles}
        if (any(passes) and not all(passes)) or (all(passes) and len(rewards) > 1):
            oracle_reasons.append("flaky_verifier")
        elif not any(passes):
            for run in oracles:
                solution = run.solution or {}
                if solution.get("outcome") not in (None, "ok"):
                    oracle_reasons.append(f"oracle_solution_{solution['outcome']}")
                elif fetched := network_failure(str(run.verifier.get("stdout", "")), str(run.verifier.get("stderr", ""))):
                    oracle_reasons.append(f"verifier_needs_network: {fetched}")
                else:
                    oracle_reasons.append(f"oracle_fails: {run.verifier.get('failure_type')}")
        if len({(r.passed, r.verifier.get("reward")) for r in nops}) > 1:
            oracle_reasons.append("flaky_verifier")
        self._count("oracle", oracle_reasons)
        reasons += [r for r in dict.fromkeys(oracle_reasons) if r not in reasons]
        return reasons

    @staticmethod
    def _count(gate: str, reasons: list[str]) -> None:
        if not reasons:
            GATE_OUTCOMES.labels(gate, "pass", "").inc()
        for reason in dict.fromkeys(reasons):
            GATE_OUTCOMES.labels(gate, "fail", reason.split(":")[0]).inc()


def load_task(path: Path) -> TaskDir:
    task = TaskDir(path)
    if not task.config_path.is_file():
        raise TaskFormatError(f"{path}: no task.toml", path=str(path))
    return task
