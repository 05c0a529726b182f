"""The validator service: approved tasks go through the validity gate (and the skill contrast
when a baseline endpoint is configured); the report is stored and an ``EnvValidated`` event
says whether the task is valid, with its label and reasons."""

from __future__ import annotations

from collections.abc import Sequence

from skillgym_core import keys
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import Envelope, EnvReviewed, EnvValidated, Payload
from skillgym_core.contracts.topics import ENV_REVIEWED
from skillgym_core.metrics import VALIDATION_LABELS
from skillgym_core.store.base import put_json

from skillgym_validator.settings import ValidatorSettings
from skillgym_validator.validation import Validator


class ValidatorService:
    name = "validator"
    concurrent = True  # each event validates in its own scratch directories and sandboxes
    consumes = (ENV_REVIEWED,)

    def __init__(self, ctx: ServiceContext, settings: ValidatorSettings | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or ValidatorSettings()
        self.validator = Validator(ctx.sandbox, self.settings)
        for label in ("skill-dep", "verifier-passed", "unlabelled"):  # ratios read 0, not "no data"
            VALIDATION_LABELS.labels(label)

    def handle(self, event: Envelope) -> Sequence[Payload]:
        reviewed = event.payload_as(EnvReviewed)
        if not reviewed.approved:
            return []
        with self.ctx.task_checkout(reviewed.package_key) as task:
            record = self.validator.validate(task, self.ctx.scratch)
        record["package_key"] = reviewed.package_key
        record["review_report_key"] = reviewed.report_key
        report_key = put_json(self.ctx.store, keys.task_validation(reviewed.task_id), record)
        return [
            EnvValidated(
                task_id=reviewed.task_id,
                skill_id=reviewed.skill_id,
                package_key=reviewed.package_key,
                valid=record["valid"],
                label=record["label"],
                reasons=record["reasons"],
                report_key=report_key,
                category=record.get("category"),
            )
        ]
