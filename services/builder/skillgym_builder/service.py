"""The builder service: skill-ingested → env-built; env-feedback and hardening-requested → a
new revision of the task, which goes back through review."""

from __future__ import annotations

import logging
import random
import shutil
import tempfile
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from skillgym_core import keys, metrics
from skillgym_core.context import ServiceContext
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import (
    EnvBuilt,
    Envelope,
    EnvFeedback,
    HardeningRequested,
    Payload,
    SkillIngested,
)
from skillgym_core.contracts.task import TaskConfig
from skillgym_core.store.base import put_json

from skillgym_builder.blueprint import with_patterns
from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.package import BuildInfo, write_task
from skillgym_builder.patterns import PatternPool
from skillgym_builder.settings import BuilderSettings
from skillgym_builder.skillcard import SkillCard, skill_card
from skillgym_builder.templates import TemplateRegistry, registry
from skillgym_builder.templates.base import Template

log = logging.getLogger(__name__)


def skill_build_report_key(skill_id: str) -> str:
    return f"skills/{skill_id}/build.json"


class BuilderService:
    name = "builder"
    consumes = (topics.SKILL_INGESTED, topics.ENV_FEEDBACK, topics.HARDENING_REQUESTED)

    def __init__(
        self,
        ctx: ServiceContext,
        settings: BuilderSettings | None = None,
        templates: TemplateRegistry | None = None,
    ) -> None:
        self.ctx = ctx
        self.settings = settings or BuilderSettings()
        self.templates = templates or registry()

    def handle(self, event: Envelope) -> Sequence[Payload]:
        payload = event.payload
        if isinstance(payload, SkillIngested):
            return self.on_skill(payload)
        if isinstance(payload, EnvFeedback):
            return self.on_feedback(payload)
        if isinstance(payload, HardeningRequested):
            return self.on_hardening(payload)
        return []

    # -- skill-ingested -------------------------------------------------------------------
    def on_skill(self, event: SkillIngested) -> list[Payload]:
        with self._card(event.skill_id) as card:
            reasons: dict[str, str] = {}
            for template in self.templates.candidates(card, self.settings.preferred_templates):
                reason = template.unsuitable_reason(card)
                if reason is None:
                    try:
                        built = self.build(card, template, BuildInfo())
                    except UnsuitableSkillError as exc:
                        reason = str(exc)
                    else:
                        metrics.GATE_OUTCOMES.labels("suitability", "passed", "fits").inc()
                        return [built]
                reasons[template.spec.id] = reason
            skipped = UnsuitableSkillError(
                f"no template fits skill {card.name!r}", skill_id=card.record.skill_id, templates=reasons
            )
            put_json(self.ctx.store, skill_build_report_key(event.skill_id), skipped.to_dict())
            metrics.GATE_OUTCOMES.labels("suitability", "skipped", skipped.reason).inc()
            log.info("skill skipped", extra={"skill_id": event.skill_id, "reasons": reasons})
            return []

    def build(self, card: SkillCard, template: Template, info: BuildInfo) -> EnvBuilt:
        seed = f"{card.record.skill_id}:{template.spec.id}:{info.revision}"
        rng = random.Random(seed)
        pool = PatternPool.load(self.ctx.store)
        forced = [pool.patterns[p] for p in info.patterns if p in pool.patterns]
        chosen = pool.choose(
            rng, template.supported_knobs, max(0, self.settings.patterns_per_task - len(forced)),
            exclude=info.patterns,
        )
        blueprint = with_patterns(template.spec.blueprint, [(p.id, p.description) for p in forced + chosen])
        info = replace(info, patterns=tuple(blueprint.patterns))
        output = template.generate(card, rng, blueprint)
        parent = Path(tempfile.mkdtemp(prefix="build-", dir=self.ctx.scratch))
        try:
            task_id, task = write_task(parent / "task", card, template.spec, output, info)
            package_key = self.ctx.save_task(task_id, task)
        finally:
            shutil.rmtree(parent, ignore_errors=True)
        metrics.TASKS_BUILT.labels(template.spec.id).inc()
        return EnvBuilt(
            task_id=task_id,
            skill_id=card.record.skill_id,
            package_key=package_key,
            template=template.spec.id,
            revision=info.revision,
            parent_task_id=info.parent_task_id,
            builder=info.builder,
        )

    # -- env-feedback ---------------------------------------------------------------------
    def on_feedback(self, event: EnvFeedback) -> list[Payload]:
        config = self._task_config(event.task_id)
        meta = config.metadata
        with self._card(event.skill_id) as card:
            template = self.templates.get(meta.template)
            info = BuildInfo(
                revision=meta.revision + 1,
                parent_task_id=event.task_id,
                builder=str(getattr(meta, "builder", "template")),
                extra={
                    "feedback_round": event.attempt,
                    "feedback": {"failure_type": event.failure_type, "reasons": event.reasons[:20]},
                },
            )
            return [self.build(card, template, info)]

    # -- hardening-requested --------------------------------------------------------------
    def on_hardening(self, event: HardeningRequested) -> list[Payload]:
        if event.round > self.settings.max_hardening_rounds:
            log.info("hardening budget spent", extra={"task_id": event.task_id, "round": event.round})
            return []
        config = self._task_config(event.task_id)
        meta = config.metadata
        with self._card(event.skill_id) as card:
            template = self.templates.get(meta.template)
            info = BuildInfo(revision=meta.revision + 1, parent_task_id=event.task_id)
            return [self.build(card, template, info)]

    # -- helpers --------------------------------------------------------------------------
    def _task_config(self, task_id: str) -> TaskConfig:
        with self.ctx.task_checkout(keys.task_package(task_id)) as task:
            return task.config()

    def _card(self, skill_id: str) -> AbstractContextManager[SkillCard]:
        return skill_card(self.ctx.store, skill_id, self.ctx.scratch)
