"""The builder service: skill-ingested → env-built; env-feedback and hardening-requested → a
new revision of the task, which goes back through review.

With an LLM endpoint configured the builder agent writes the task (``builder = "llm"``); the
offline templates are the fallback (``builder = "template"``)."""

from __future__ import annotations

import logging
import random
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillgym_core import keys, metrics
from skillgym_core.context import ServiceContext
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import EnvBuilt, Envelope, EnvFeedback, HardeningRequested, Payload, SkillIngested
from skillgym_core.contracts.task import TaskConfig
from skillgym_core.llm import LLMClient, LLMError, LLMSettings
from skillgym_core.store.base import put_json

from skillgym_builder.agent.author import LLMTaskAuthor
from skillgym_builder.blueprint import with_patterns
from skillgym_builder.errors import BuildError, UnsuitableSkillError
from skillgym_builder.hardening import diagnose, shortcut_pattern
from skillgym_builder.package import BuildInfo, write_task
from skillgym_builder.patterns import Pattern, PatternPool
from skillgym_builder.settings import BuilderSettings
from skillgym_builder.skillcard import SkillCard, skill_card
from skillgym_builder.templates import TemplateRegistry, registry
from skillgym_builder.templates.base import Template, TemplateOutput

log = logging.getLogger(__name__)


def skill_build_report_key(skill_id: str) -> str:
    return f"skills/{skill_id}/build.json"


def hardening_report_key(task_id: str, round_: int) -> str:
    return f"tasks/{task_id}/hardening-{round_}.json"


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
        self.author: LLMTaskAuthor | None = None
        if self.settings.builder_llm_base_url:
            client = LLMClient(
                LLMSettings(
                    base_url=self.settings.builder_llm_base_url,
                    model=self.settings.builder_llm_model,
                    api_key=self.settings.builder_llm_api_key,
                    timeout_s=self.settings.builder_llm_timeout_s,
                ),
                role="builder",
            )
            self.author = LLMTaskAuthor(client, ctx.sandbox, max_turns=self.settings.builder_llm_max_turns)

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
            candidates = self.templates.candidates(card, self.settings.preferred_templates)
            if self.author is not None:
                # the agent is not bound to a template's data needs: it only borrows the profile
                suitable = [t for t in candidates if t.unsuitable_reason(card) is None]
                candidates = (suitable or candidates)[:1]
            for template in candidates:
                reason = None if self.author is not None else template.unsuitable_reason(card)
                if reason is None:
                    try:
                        built = self.build(card, template, BuildInfo())
                    except UnsuitableSkillError as exc:
                        reason = str(exc)
                    else:
                        metrics.GATE_OUTCOMES.labels("suitability", "passed", "fits").inc()
                        return [built]
                reasons[template.spec.id] = reason
            return self._skip(event.skill_id, card, reasons)

    def _skip(self, skill_id: str, card: SkillCard, reasons: dict[str, str]) -> list[Payload]:
        skipped = UnsuitableSkillError(f"no template fits skill {card.name!r}", skill_id=skill_id, templates=reasons)
        put_json(self.ctx.store, skill_build_report_key(skill_id), skipped.to_dict())
        metrics.GATE_OUTCOMES.labels("suitability", "skipped", skipped.reason).inc()
        log.info("skill skipped", extra={"skill_id": skill_id, "reasons": reasons})
        return []

    # -- building -------------------------------------------------------------------------
    def build(
        self,
        card: SkillCard,
        template: Template,
        info: BuildInfo,
        *,
        previous: Path | None = None,
        feedback: dict[str, Any] | None = None,
        diagnosis: dict[str, Any] | None = None,
    ) -> EnvBuilt:
        rng = random.Random(f"{card.record.skill_id}:{template.spec.id}:{info.revision}")
        pool = PatternPool.load(self.ctx.store)
        use_llm = self.author is not None and info.builder != "template"
        forced = [pool.patterns[p] for p in info.patterns if p in pool.patterns]
        chosen = pool.choose(
            rng, template.supported_knobs, max(0, self.settings.patterns_per_task - len(forced)),
            prompt_only=use_llm, exclude=info.patterns,
        )
        patterns = forced + chosen
        blueprint = with_patterns(template.spec.blueprint, [(p.id, p.description) for p in patterns])
        info = replace(info, patterns=tuple(blueprint.patterns))
        with self._workdir() as workdir:
            if use_llm and self.author is not None:
                try:
                    authored = self.author.author(
                        card, template.spec, blueprint, [p.model_dump() for p in patterns], workdir / "agent",
                        previous=previous, feedback=feedback, diagnosis=diagnosis,
                    )
                except (LLMError, BuildError) as exc:
                    if isinstance(exc, UnsuitableSkillError):
                        raise
                    log.warning("builder agent failed; using the template", extra={"error": str(exc)})
                    extra = {**(info.extra or {}), "llm_fallback_reason": str(exc)[:500]}
                    info = replace(info, builder="template", extra=extra)
                else:
                    if authored.new_pattern:
                        self._add_pattern(pool, authored.new_pattern)
                    extra = {**(info.extra or {}), "llm_usage": authored.usage}
                    return self._materialise(card, template, authored.output, replace(info, builder="llm", extra=extra), workdir)
            reason = template.unsuitable_reason(card)
            if reason is not None:
                raise UnsuitableSkillError(reason, skill=card.name, template=template.spec.id)
            output = template.generate(card, rng, blueprint)
            return self._materialise(card, template, output, replace(info, builder="template"), workdir)

    def _materialise(
        self, card: SkillCard, template: Template, output: TemplateOutput, info: BuildInfo, workdir: Path
    ) -> EnvBuilt:
        task_id, task = write_task(workdir / "task", card, template.spec, output, info)
        package_key = self.ctx.save_task(task_id, task)
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

    def _add_pattern(self, pool: PatternPool, raw: dict[str, Any]) -> None:
        try:
            pool.add(self.ctx.store, Pattern.model_validate({**raw, "knob": None}))
        except ValueError as exc:
            log.info("ignored an invalid new pattern", extra={"error": str(exc)})

    # -- env-feedback ---------------------------------------------------------------------
    def on_feedback(self, event: EnvFeedback) -> list[Payload]:
        with self.ctx.task_checkout(keys.task_package(event.task_id)) as previous, self._card(event.skill_id) as card:
            meta = previous.config().metadata
            template = self.templates.get(meta.template)
            feedback = {"failure_type": event.failure_type, "reasons": event.reasons[:20], "attempt": event.attempt}
            info = BuildInfo(
                revision=meta.revision + 1,
                parent_task_id=event.task_id,
                builder=str(getattr(meta, "builder", "template")),
                patterns=tuple(meta.difficulty_patterns),
                extra={"feedback_round": event.attempt, "feedback": feedback},
            )
            return [self.build(card, template, info, previous=previous.root, feedback=feedback)]

    # -- hardening-requested --------------------------------------------------------------
    def on_hardening(self, event: HardeningRequested) -> list[Payload]:
        if event.round > self.settings.max_hardening_rounds:
            put_json(self.ctx.store, hardening_report_key(event.task_id, event.round),
                     {"task_id": event.task_id, "round": event.round, "outcome": "budget_spent"})
            return []
        diagnosis = diagnose(self.ctx.store, event.trajectory_keys, event.pass_rate)
        pool = PatternPool.load(self.ctx.store)
        new_pattern = shortcut_pattern(event.task_id, event.round, diagnosis)
        if new_pattern:
            self._add_pattern(pool, new_pattern)
        with self.ctx.task_checkout(keys.task_package(event.task_id)) as previous, self._card(event.skill_id) as card:
            config: TaskConfig = previous.config()
            meta = config.metadata
            template = self.templates.get(meta.template)
            builder = str(getattr(meta, "builder", "template"))
            used = list(meta.difficulty_patterns)
            unused = [k for k in template.supported_knobs if k not in used]
            if builder != "llm" and not unused:
                report = {"task_id": event.task_id, "round": event.round, "diagnosis": diagnosis,
                          "outcome": "no_harder_variant", "template": template.spec.id}
                put_json(self.ctx.store, hardening_report_key(event.task_id, event.round), report)
                return []
            added = unused[:1] if unused else ([new_pattern["id"]] if new_pattern else [])
            info = BuildInfo(
                revision=meta.revision + 1,
                parent_task_id=event.task_id,
                builder=builder,
                patterns=tuple(used + added),
                extra={"hardening_round": event.round, "hardening": diagnosis, "feedback_round": 0},
            )
            built = self.build(card, template, info, previous=previous.root, diagnosis=diagnosis)
        put_json(self.ctx.store, hardening_report_key(event.task_id, event.round), {
            "task_id": event.task_id, "round": event.round, "diagnosis": diagnosis, "outcome": "revised",
            "new_task_id": built.task_id, "added_patterns": added, "new_pattern": new_pattern,
        })
        return [built]

    # -- helpers --------------------------------------------------------------------------
    def _card(self, skill_id: str) -> AbstractContextManager[SkillCard]:
        return skill_card(self.ctx.store, skill_id, self.ctx.scratch)

    @contextmanager
    def _workdir(self) -> Iterator[Path]:
        path = Path(tempfile.mkdtemp(prefix="build-", dir=self.ctx.scratch))
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
