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

from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import TaskFormatError
from skillgym_core.metrics import GATE_OUTCOMES
from skillgym_core.sandbox.base import SandboxResult
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

# A nop run may end without a reward file (the verifier found nothing to grade): that is
# still v(x0) = 0. A verifier that times out, is killed or tampers is not.
NOP_ACCEPTABLE_FAILURES = {"verifier_rejected", "reward_file_missing"}


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


class ValidityGate:
    def __init__(self, runner: TaskRunner, *, nop_runs: int = 1, oracle_runs: int = 2, log_tail_chars: int = 4000):
        self.runner = runner
        self.nop_runs = nop_runs
        self.oracle_runs = oracle_runs
        self.tail = log_tail_chars

    def _nop(self, task: TaskDir, scratch: Path, index: int) -> GateRun:
        started = time.monotonic()
        workspace = self.runner.fresh_workspace(task, scratch)
        verdict = self.runner.verify(task, workspace)
        discard_tree(workspace)
        return GateRun("nop", index, _verifier_record(verdict, self.tail), seconds=time.monotonic() - started)

    def _oracle(self, task: TaskDir, scratch: Path, index: int) -> GateRun:
        started = time.monotonic()
        workspace = self.runner.fresh_workspace(task, scratch)
        solution = self.runner.run_solution(task, workspace)
        verdict = self.runner.verify(task, workspace)
        discard_tree(workspace)
        return GateRun(
            "oracle",
            index,
            _verifier_record(verdict, self.tail),
            solution=_solution_record(solution, self.tail),
            seconds=time.monotonic() - started,
        )

    def check(self, task: TaskDir, scratch: Path) -> GateReport:
        started = time.monotonic()
        problems = task.check_layout()
        if not (task.solution / "solve.sh").is_file():
            problems.append("missing solution/solve.sh")
        if problems:
            report = GateReport(False, [f"invalid_layout: {p}" for p in problems])
            GATE_OUTCOMES.labels("layout", "fail", "invalid_layout").inc()
            return report
        tmp = Path(tempfile.mkdtemp(prefix="gate-", dir=scratch))
        try:
            runs = [self._nop(task, tmp, i) for i in range(self.nop_runs)]
            runs += [self._oracle(task, tmp, i) for i in range(self.oracle_runs)]
        finally:
            discard_tree(tmp)
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
                else:
                    oracle_reasons.append(f"oracle_fails: {run.verifier.get('failure_type')}")
        if not any(r.passed for r in nops) and len({(r.passed, r.verifier.get("reward")) for r in nops}) > 1:
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
