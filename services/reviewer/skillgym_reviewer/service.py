"""The reviewer service: env-built → env-reviewed (+ env-feedback within the per-task budget).

Gates run in order (conformance, validity by execution, then the quality gates on the solved
workspace); the first failing gate types the rejection, and every verdict is kept in the report."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path

from skillgym_core import keys, metrics
from skillgym_core.context import ServiceContext
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import EnvBuilt, Envelope, EnvFeedback, EnvReviewed, Payload
from skillgym_core.contracts.task import TaskConfig, TaskDir
from skillgym_core.envbuild import environment_provider
from skillgym_core.llm import LLMClient, LLMSettings
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.store.base import put_json
from skillgym_core.taskrun import TaskRunner

from skillgym_reviewer.gates.conformance import conformance_gate
from skillgym_reviewer.gates.environment import environment_gate
from skillgym_reviewer.gates.llm_review import LLMReviewGate
from skillgym_reviewer.gates.quality import ExtraGate, QualityGates
from skillgym_reviewer.gates.validity import run_validity
from skillgym_reviewer.report import GateResult, ReviewReport
from skillgym_reviewer.settings import ReviewerSettings

log = logging.getLogger(__name__)


def dropped_key(task_id: str) -> str:
    return f"tasks/{task_id}/dropped.json"


class ReviewerService:
    name = "reviewer"
    consumes = (topics.ENV_BUILT,)

    def __init__(self, ctx: ServiceContext, settings: ReviewerSettings | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or ReviewerSettings()
        self.environment = environment_provider(self.settings, ctx.sandbox.name)
        self.runner = TaskRunner(ctx.sandbox, environment=self.environment)
        extra: list[ExtraGate] = []
        if self.settings.reviewer_llm_base_url:
            client = LLMClient(
                LLMSettings(
                    base_url=self.settings.reviewer_llm_base_url,
                    model=self.settings.reviewer_llm_model,
                    api_key=self.settings.reviewer_llm_api_key,
                    timeout_s=self.settings.reviewer_llm_timeout_s,
                ),
                role="reviewer",
            )
            extra.append(LLMReviewGate(client))
        self.quality = QualityGates(self.runner, self.settings, extra)

    def handle(self, event: Envelope) -> Sequence[Payload]:
        payload = event.payload
        if not isinstance(payload, EnvBuilt):
            return []
        with self.ctx.task_checkout(payload.package_key) as task:
            report = self.review(task, payload)
        return self._emit(payload, report)

    def review(self, task: TaskDir, event: EnvBuilt) -> ReviewReport:
        gates = [conformance_gate(task)]
        config: TaskConfig | None = None
        if gates[0].passed:
            config = task.config()
            gates.append(environment_gate(task, self.environment))
        if all(gate.passed for gate in gates):
            workdir = Path(tempfile.mkdtemp(prefix="review-", dir=self.ctx.scratch))
            try:
                validity, evidence = run_validity(task, self.runner, workdir)
                gates.append(validity)
                if validity.passed and evidence is not None and self.settings.run_probes:
                    gates.extend(self.quality.run(task, evidence, workdir))
            finally:
                remove_tree(workdir)
        for gate in gates:
            metrics.GATE_OUTCOMES.labels(
                gate.gate, "passed" if gate.passed else "failed", gate.failure_type or "ok"
            ).inc()
        feedback_round = int(getattr(config.metadata, "feedback_round", 0) or 0) if config else 0
        return ReviewReport.from_gates(
            gates,
            task_id=event.task_id,
            skill_id=event.skill_id,
            revision=event.revision,
            parent_task_id=event.parent_task_id,
            builder=event.builder,
            template=event.template,
            feedback_round=feedback_round,
        )

    def _emit(self, event: EnvBuilt, report: ReviewReport) -> list[Payload]:
        outputs: list[Payload] = []
        if not report.approved:
            if report.feedback_round < self.settings.feedback_budget:
                report.feedback_sent = True
            else:
                report.dropped = True
        report_key = put_json(self.ctx.store, keys.task_review(event.task_id), report.model_dump(mode="json"))
        if report.dropped:
            put_json(self.ctx.store, dropped_key(event.task_id), {
                "task_id": event.task_id, "skill_id": event.skill_id, "package_key": event.package_key,
                "report_key": report_key, "failure_type": report.failure_type, "reasons": report.reasons,
                "feedback_round": report.feedback_round,
            })
            log.info("task dropped", extra={"task_id": event.task_id, "failure_type": report.failure_type})
        outputs.append(EnvReviewed(
            task_id=event.task_id,
            skill_id=event.skill_id,
            package_key=event.package_key,
            approved=report.approved,
            failure_type=report.failure_type,
            reasons=report.reasons,
            report_key=report_key,
            revision=event.revision,
        ))
        if report.feedback_sent:
            outputs.append(EnvFeedback(
                task_id=event.task_id,
                skill_id=event.skill_id,
                failure_type=report.failure_type or "checker_error",
                reasons=report.reasons,
                attempt=report.feedback_round + 1,
                report_key=report_key,
            ))
        return outputs


def gate_names(report: ReviewReport) -> list[str]:
    return [gate.gate for gate in report.gates]


__all__ = ["GateResult", "ReviewerService", "dropped_key", "gate_names"]
