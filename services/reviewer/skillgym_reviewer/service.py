"""The reviewer service: env-built → env-reviewed (+ env-feedback within the per-task budget).

Each task is reviewed by :class:`~skillgym_reviewer.review.TaskReviewer` (conformance, validity
by execution, then the quality gates on the solved workspace); a rejection within the budget
goes back to the builder as feedback carrying the failing gates' reasons."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from skillgym_core import keys
from skillgym_core.context import ServiceContext
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import EnvBuilt, Envelope, EnvFeedback, EnvReviewed, Payload
from skillgym_core.contracts.task import TaskDir
from skillgym_core.store.base import put_json

from skillgym_reviewer.report import GateResult, ReviewReport
from skillgym_reviewer.review import TaskReviewer
from skillgym_reviewer.settings import ReviewerSettings

log = logging.getLogger(__name__)


def dropped_key(task_id: str) -> str:
    return f"tasks/{task_id}/dropped.json"


class ReviewerService:
    name = "reviewer"
    consumes = (topics.ENV_BUILT,)
    # each review runs in its own scratch directories and sandboxes; what reviews share (the
    # task runner's config cache, the environment cache with its per-key file locks, the LLM
    # client) is safe across threads
    concurrent = True

    def __init__(self, ctx: ServiceContext, settings: ReviewerSettings | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or ReviewerSettings()
        self.reviewer = TaskReviewer(ctx.sandbox, self.settings, ctx.scratch)
        self.environment = self.reviewer.environment
        self.runner = self.reviewer.runner
        self.quality = self.reviewer.quality

    def handle(self, event: Envelope) -> Sequence[Payload]:
        payload = event.payload
        if not isinstance(payload, EnvBuilt):
            return []
        with self.ctx.task_checkout(payload.package_key) as task:
            report = self.review(task, payload)
        return self._emit(payload, report)

    def review(self, task: TaskDir, event: EnvBuilt) -> ReviewReport:
        return self.reviewer.review(task, event)

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
