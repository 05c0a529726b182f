"""The quality gates that need a solved workspace: leakage, too-lax and too-strict probes,
anti-tamper probes, mutation probes and (when configured) the LLM review against the blueprint."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from skillgym_core.contracts.task import TaskDir
from skillgym_core.taskrun import TaskRunner

from skillgym_reviewer.gates.leakage import leakage_gate
from skillgym_reviewer.gates.mutation import MutationGates, WrongSolutionWriter
from skillgym_reviewer.gates.probes import Prober, lax_gate, strict_gate
from skillgym_reviewer.gates.validity import Evidence
from skillgym_reviewer.report import GateResult
from skillgym_reviewer.settings import ReviewerSettings


class ExtraGate(Protocol):
    def __call__(self, task: TaskDir, evidence: Evidence, gates: list[GateResult]) -> GateResult | None: ...


def timed(gate: Callable[[], GateResult]) -> GateResult:
    started = time.monotonic()
    result = gate()
    result.seconds = round(time.monotonic() - started, 3)
    return result


class QualityGates:
    def __init__(
        self,
        runner: TaskRunner,
        settings: ReviewerSettings,
        extra: list[ExtraGate] | None = None,
        wrong_solutions: WrongSolutionWriter | None = None,
    ) -> None:
        self.runner = runner
        self.settings = settings
        self.extra = extra or []
        self.mutation = MutationGates(runner, settings, wrong_solutions)

    def run(self, task: TaskDir, evidence: Evidence, workdir: Path) -> list[GateResult]:
        prober = Prober(task, self.runner, evidence, workdir, self.settings.probe_workers or None,
                        bulk=self.settings.bulk_judging)
        gates = [timed(lambda: leakage_gate(task, evidence, self.settings.min_leak_chars))]
        # the probing gates wait on sandbox start-up far more than they compute: run them side by side
        with ThreadPoolExecutor(max_workers=3, thread_name_prefix="gate") as pool:
            lax = pool.submit(timed, lambda: lax_gate(prober))
            strict = pool.submit(timed, lambda: strict_gate(prober))
            mutation = pool.submit(self._mutation, task, evidence, prober, strict) if self.settings.mutation_probes else None
            gates += [lax.result(), strict.result(), *(mutation.result() if mutation else [])]
        for gate in self.extra:
            result = timed_extra(gate, task, evidence, gates)
            if result is not None:
                gates.append(result)
        return gates

    def _mutation(self, task: TaskDir, evidence: Evidence, prober: Prober, strict: Future[GateResult]) -> list[GateResult]:
        def alternatives() -> list[dict[str, bytes]]:
            strict.result()  # the strict gate runs the alternative solutions and keeps what they wrote
            return [prober.alternative_outputs[name] for name in sorted(prober.alternative_outputs)]

        started = time.monotonic()
        gates = self.mutation.run(task, evidence, prober, alternatives)
        gates[0].seconds = round(time.monotonic() - started, 3)
        return gates


def timed_extra(gate: ExtraGate, task: TaskDir, evidence: Evidence, gates: list[GateResult]) -> GateResult | None:
    started = time.monotonic()
    result = gate(task, evidence, gates)
    if result is not None:
        result.seconds = round(time.monotonic() - started, 3)
    return result
