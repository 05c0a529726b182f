"""Gate: the verifier runs the agent's code only through ``run-untrusted``, read statically
before any run (see :mod:`skillgym_core.verifier_code`)."""

from __future__ import annotations

from skillgym_core.contracts.task import TaskDir
from skillgym_core.verifier_code import unconfined_in_task

from skillgym_reviewer.report import GateResult

GATE = "verifier_confinement"


def confinement_gate(task: TaskDir) -> GateResult:
    findings = unconfined_in_task(task)
    if not findings:
        return GateResult.ok(GATE)
    # a verifier the agent's code can make pass is too lax, as the forging probe finds it at run time
    return GateResult.fail(GATE, "too_lax", [finding.message() for finding in findings[:10]],
                           findings=[finding.__dict__ for finding in findings[:50]])
