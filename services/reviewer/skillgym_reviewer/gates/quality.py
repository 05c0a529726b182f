"""The quality gates that need a solved workspace: leakage, too-lax and too-strict probes,
anti-tamper probes and (when configured) the LLM review against the blueprint."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from skillgym_core.contracts.task import TaskDir
from skillgym_core.taskrun import TaskRunner

from skillgym_reviewer.gates.leakage import leakage_gate
from skillgym_reviewer.gates.probes import Prober, lax_gate, strict_gate
from skillgym_reviewer.gates.validity import Evidence
from skillgym_reviewer.report import GateResult
from skillgym_reviewer.settings import ReviewerSettings


class ExtraGate(Protocol):
    def __call__(self, task: TaskDir, evidence: Evidence, gates: list[GateResult]) -> GateResult | None: ...


class QualityGates:
    def __init__(self, runner: TaskRunner, settings: ReviewerSettings, extra: list[ExtraGate] | None = None) -> None:
        self.runner = runner
        self.settings = settings
        self.extra = extra or []

    def run(self, task: TaskDir, evidence: Evidence, workdir: Path) -> list[GateResult]:
        prober = Prober(task, self.runner, evidence, workdir)
        gates = [
            leakage_gate(task, evidence, self.settings.min_leak_chars),
            lax_gate(prober),
            strict_gate(prober),
        ]
        for gate in self.extra:
            result = gate(task, evidence, gates)
            if result is not None:
                gates.append(result)
        return gates
