"""Reviewing one task: conformance, the environment, validity by execution, then the quality
gates on the solved workspace. The first failing gate types the rejection; every verdict is
kept in the report. Used by the service (for stored packages) and by :func:`review_task_dir`."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from skillgym_core import metrics
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.contracts.task import TaskConfig, TaskDir
from skillgym_core.envbuild import environment_provider
from skillgym_core.llm import LLMClient, LLMSettings
from skillgym_core.sandbox.base import Sandbox
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.taskrun import TaskRunner

from skillgym_reviewer.gates.confinement import confinement_gate
from skillgym_reviewer.gates.conformance import conformance_gate
from skillgym_reviewer.gates.environment import environment_gate
from skillgym_reviewer.gates.llm_review import LLMReviewGate
from skillgym_reviewer.gates.mutation import WrongSolutionWriter
from skillgym_reviewer.gates.quality import ExtraGate, QualityGates, timed
from skillgym_reviewer.gates.validity import run_validity
from skillgym_reviewer.metrics import TOO_LAX_REJECTIONS
from skillgym_reviewer.report import GateResult, ReviewReport
from skillgym_reviewer.settings import ReviewerSettings


def reviewer_llm(settings: ReviewerSettings) -> LLMClient | None:
    if not settings.reviewer_llm_base_url:
        return None
    return LLMClient(
        LLMSettings(
            base_url=settings.reviewer_llm_base_url,
            model=settings.reviewer_llm_model,
            api_key=settings.reviewer_llm_api_key,
            timeout_s=settings.reviewer_llm_timeout_s,
        ),
        role="reviewer",
    )


class TaskReviewer:
    def __init__(self, sandbox: Sandbox, settings: ReviewerSettings, scratch: Path) -> None:
        self.settings = settings
        self.scratch = scratch
        self.environment = environment_provider(settings, sandbox.name)
        self.runner = TaskRunner(sandbox, environment=self.environment)
        self.client = reviewer_llm(settings)
        extra: list[ExtraGate] = [LLMReviewGate(self.client)] if self.client else []
        writer = WrongSolutionWriter(self.client, settings.mutation_llm_solutions) if self.client else None
        self.quality = QualityGates(self.runner, settings, extra, writer)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def review(self, task: TaskDir, event: EnvBuilt) -> ReviewReport:
        started = time.monotonic()
        gates = [timed(lambda: conformance_gate(task))]
        config: TaskConfig | None = None
        if gates[0].passed:
            config = task.config()
            gates.append(timed(lambda: confinement_gate(task)))
        if all(gate.passed for gate in gates):
            gates.append(timed(lambda: environment_gate(task, self.environment)))
        if all(gate.passed for gate in gates):
            gates += self._executed(task)
        for gate in gates:
            metrics.GATE_OUTCOMES.labels(
                gate.gate, "passed" if gate.passed else "failed", gate.failure_type or "ok"
            ).inc()
        feedback_round = _feedback_round(task, config, event)
        report = ReviewReport.from_gates(
            gates,
            task_id=event.task_id,
            skill_id=event.skill_id,
            revision=event.revision,
            parent_task_id=event.parent_task_id,
            builder=event.builder,
            template=event.template,
            feedback_round=feedback_round,
        )
        report.seconds = round(time.monotonic() - started, 3)
        if report.failure_type == "too_lax":
            TOO_LAX_REJECTIONS.labels((config.metadata.template if config else "") or event.template or "unknown").inc()
        return report

    def _executed(self, task: TaskDir) -> list[GateResult]:
        workdir = Path(tempfile.mkdtemp(prefix="review-", dir=self.scratch))
        try:
            started = time.monotonic()
            validity, evidence = run_validity(task, self.runner, workdir, reruns=self.settings.stability_reruns)
            validity.seconds = round(time.monotonic() - started, 3)
            gates = [validity]
            if validity.passed and evidence is not None and self.settings.run_probes:
                gates += self.quality.run(task, evidence, workdir)
            return gates
        finally:
            remove_tree(workdir)


def _feedback_round(task: TaskDir, config: TaskConfig | None, event: EnvBuilt) -> int:
    """How many review rounds this lineage has had. Read from task.toml even when the task
    failed conformance (else a builder that keeps writing broken tasks would get feedback
    forever); a task.toml that cannot be read at all counts its revision instead."""
    if config is None:
        try:
            config = task.config()
        except Exception:  # unreadable task.toml: the lineage's revision bounds the rounds
            return event.revision
    return int(getattr(config.metadata, "feedback_round", 0) or 0)
