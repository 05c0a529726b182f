"""The builder service: skill-ingested → env-built; env-feedback and hardening-requested → a
new revision of the task, which goes back through review.

A skill gets the task family the suitability gate picks for it (``builder = "family"``); with an
LLM endpoint configured the builder agent adapts that family's instance instead (``"llm"``, the
family instance being the fallback), and writes tasks for skills no family fits starting from
the nearest family's example. A skill nothing can serve is skipped, with every family's reason
kept in ``skills/<id>/build.json``. The text templates run only when the plan
(``preferred_templates``) names them (``"template"``). A task the family instance or a template
makes because the agent failed is recorded as a fallback (see :mod:`skillgym_builder.fallback`);
with ``require_llm`` the build fails instead (``llm_required``)."""

from __future__ import annotations

import logging
import random
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
from skillgym_core.envbuild import environment_provider
from skillgym_core.llm import LLMClient, LLMError, LLMSettings
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.store.base import put_json

from skillgym_builder.agent.author import LLMTaskAuthor
from skillgym_builder.blueprint import with_patterns
from skillgym_builder.errors import BuildError, LLMRequiredError, UnsuitableSkillError
from skillgym_builder.fallback import fallback_metadata, llm_required, record_fallback
from skillgym_builder.families import Choice, FamilyRegistry
from skillgym_builder.families import registry as family_registry
from skillgym_builder.families.base import Family
from skillgym_builder.family_build import DraftValidator, FamilyMaterialiser, first_plan
from skillgym_builder.family_flow import TRY_NEXT_FAMILY, FamilyFlow, plan_of
from skillgym_builder.hardening import diagnose, harden_family, shortcut_pattern
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
    # each build generates from its own seeded generators in its own scratch directories; what
    # builds share is read-only (registries), safe across threads (sandbox, environment cache
    # with per-key file locks, LLM client) or written one object per item (added patterns)
    concurrent = True

    def __init__(
        self,
        ctx: ServiceContext,
        settings: BuilderSettings | None = None,
        templates: TemplateRegistry | None = None,
        families: FamilyRegistry | None = None,
    ) -> None:
        self.ctx = ctx
        self.settings = settings or BuilderSettings()
        self.templates = templates or registry()
        self.families = families or family_registry()
        environment = environment_provider(self.settings, ctx.sandbox.name)
        scratch = ctx.scratch / "builder"
        if self.settings.require_llm and not self.settings.builder_llm_base_url:
            raise LLMRequiredError("require_llm is set but no builder LLM endpoint is configured "
                                   "(SKILLGYM_BUILDER_LLM_BASE_URL)", fallback=None)
        self.author: LLMTaskAuthor | None = None
        if self.settings.builder_llm_base_url:
            client = LLMClient(
                LLMSettings(
                    base_url=self.settings.builder_llm_base_url,
                    model=self.settings.builder_llm_model,
                    api_key=self.settings.builder_llm_api_key,
                    timeout_s=self.settings.builder_llm_timeout_s,
                    tool_call_format=self.settings.builder_llm_tool_call_format,
                ),
                role="builder",
            )
            self.author = LLMTaskAuthor(
                client, ctx.sandbox, max_turns=self.settings.builder_llm_max_turns,
                check=DraftValidator(ctx.sandbox, environment, scratch),
                max_checks=self.settings.builder_llm_max_validations,
            )
        materialiser = FamilyMaterialiser(ctx.sandbox, environment, scratch,
                                          check_dependence=self.settings.check_skill_dependence)
        self.flow = FamilyFlow(ctx, materialiser, self.author, self.settings.family_difficulty,
                               require_llm=self.settings.require_llm)

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
            plan = list(self.settings.preferred_templates)
            choice = self.families.choose(card, plan)
            named = [t for t in plan if t in self.templates.ids()]
            family_first = choice.family is not None and choice.family.spec.id in plan and (
                not named or plan.index(choice.family.spec.id) < plan.index(named[0]))
            if named and not family_first:
                return self._from_templates(card, named, choice)
            if choice.family is not None:
                return self._from_families(card, choice)
            if self.author is not None:
                nearest = self.families.nearest(card)
                try:
                    built = self.flow.unfitted(card, nearest, choice.fits[nearest.spec.id])
                except UnsuitableSkillError as exc:
                    return self._skip(card, choice, "llm_declined", str(exc))
                except (LLMError, BuildError) as exc:
                    if self.settings.require_llm:
                        return self._failed(card, choice, llm_required(exc, fallback=None))
                    return self._skip(card, choice, "llm_builder_failed", str(exc))
                return self._built(card, choice, built)
            return self._skip(card, choice, choice.skip_reason, "no task family fits the skill")

    def _from_families(self, card: SkillCard, choice: Choice) -> list[Payload]:
        """The chosen family, else the next fitting one while a family's task would not use the
        skill or the skill's script turned out unusable when run."""
        assert choice.family is not None
        unused: dict[str, tuple[str, str]] = {}
        for family in (choice.family, *choice.runners_up):
            try:
                built = self.flow.first(card, family, choice.fits[family.spec.id])
            except UnsuitableSkillError as exc:
                code = str(exc.details.get("skip_reason") or "family_rejected")
                if code not in TRY_NEXT_FAMILY:
                    return self._skip(card, choice, code, str(exc))
                unused[family.spec.id] = (code, str(exc))
            except LLMRequiredError as exc:
                return self._failed(card, choice, exc)
            except BuildError as exc:  # e.g. inputs that could not be rendered here
                return self._skip(card, choice, f"family_{exc.reason}", str(exc))
            else:
                return self._built(card, choice, built, *self._more_instances(card, family, choice))
        code, message = next(iter(unused.values()))
        return self._skip(card, choice, code, message, families_tried=sorted(unused))

    def _from_templates(self, card: SkillCard, named: list[str], choice: Choice) -> list[Payload]:
        """The plan names text templates: they are tried in its order (the explicit opt-in)."""
        reasons: dict[str, str] = {}
        for template_id in named:
            template = self.templates.get(template_id)
            reason = None if self.author is not None else template.unsuitable_reason(card)
            if reason is None:
                try:
                    built = self.build(card, template, BuildInfo())
                except UnsuitableSkillError as exc:
                    reason = str(exc)
                except LLMRequiredError as exc:
                    return self._failed(card, choice, exc)
                else:
                    return self._built(card, choice, built)
            reasons[template_id] = reason
        return self._skip(card, choice, "templates_unsuitable", "no named template fits the skill", templates=reasons)

    def _more_instances(self, card: SkillCard, family: Family, choice: Choice) -> list[EnvBuilt]:
        """Instances 2..``instances_per_skill`` of the family that built the first: distinct seeds
        (new data, same knobs). One that cannot be built is left out; the others still are."""
        plan = first_plan(family, choice.fits[family.spec.id], self.settings.family_difficulty, card.record.skill_id)
        more: list[EnvBuilt] = []
        for seed in range(1, self.settings.instances_per_skill):
            try:
                more.append(self.flow.build(card, family, replace(plan, seed=seed), BuildInfo()))
            except (BuildError, LLMError) as exc:
                log.warning("instance not built", extra={"skill_id": card.record.skill_id, "seed": seed, "error": str(exc)})
        return more

    def _built(self, card: SkillCard, choice: Choice, built: EnvBuilt, *more: EnvBuilt) -> list[Payload]:
        metrics.GATE_OUTCOMES.labels("suitability", "passed", built.template).inc()
        put_json(self.ctx.store, skill_build_report_key(card.record.skill_id), {
            **choice.record(), "skill_id": card.record.skill_id, "outcome": "built", "family": built.template,
            "builder": built.builder, "task_id": built.task_id, "task_ids": [built.task_id, *(m.task_id for m in more)],
        })
        return [built, *more]

    def _skip(self, card: SkillCard, choice: Choice, code: str, message: str, **details: Any) -> list[Payload]:
        skill_id = card.record.skill_id
        skipped = UnsuitableSkillError(f"{message}: skill {card.name!r}", skill_id=skill_id, skip_reason=code,
                                       **details)
        put_json(self.ctx.store, skill_build_report_key(skill_id), {"outcome": "skipped", **skipped.to_dict(),
                                                                     **choice.record()})
        metrics.GATE_OUTCOMES.labels("suitability", "skipped", code).inc()
        log.info("skill skipped", extra={"skill_id": skill_id, "skip_reason": code})
        return []

    def _failed(self, card: SkillCard, choice: Choice, exc: LLMRequiredError) -> list[Payload]:
        """The builder agent failed where require_llm forbids a fallback: the skill's report keeps the
        typed error (and the agent's), counted like a skip."""
        skill_id = card.record.skill_id
        put_json(self.ctx.store, skill_build_report_key(skill_id), {
            "outcome": "skipped", **exc.to_dict(), "skill_id": skill_id, "skip_reason": exc.reason,
            **choice.record()})
        metrics.GATE_OUTCOMES.labels("suitability", "skipped", exc.reason).inc()
        log.warning("builder agent failed and require_llm is set", extra={"skill_id": skill_id, "error": str(exc)})
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
                    fallback = fallback_metadata(exc, fallback="template", require_llm=self.settings.require_llm)
                    log.warning("builder agent failed; using the template", extra={"error": str(exc)})
                    info = replace(info, builder="template", extra={**(info.extra or {}), **fallback})
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
        built = EnvBuilt(
            task_id=task_id,
            skill_id=card.record.skill_id,
            package_key=package_key,
            template=template.spec.id,
            revision=info.revision,
            parent_task_id=info.parent_task_id,
            builder=info.builder,
        )
        record_fallback(self.ctx.store, built, info.extra)
        return built

    def _add_pattern(self, pool: PatternPool, raw: dict[str, Any]) -> None:
        try:
            pool.add(self.ctx.store, Pattern.model_validate({**raw, "knob": None}))
        except ValueError as exc:
            log.info("ignored an invalid new pattern", extra={"error": str(exc)})

    # -- env-feedback ---------------------------------------------------------------------
    def on_feedback(self, event: EnvFeedback) -> list[Payload]:
        with self.ctx.task_checkout(keys.task_package(event.task_id)) as previous, self._card(event.skill_id) as card:
            meta = previous.config().metadata
            if meta.revision + 1 > self.settings.max_revisions:
                # the lineage's own bound, whatever feedback keeps arriving
                put_json(self.ctx.store, f"tasks/{event.task_id}/feedback-dropped.json", {
                    "task_id": event.task_id, "revision": meta.revision, "failure_type": event.failure_type,
                    "outcome": "revision_budget_spent", "max_revisions": self.settings.max_revisions})
                return []
            feedback = {"failure_type": event.failure_type, "reasons": event.reasons[:20], "attempt": event.attempt}
            if meta.template in self.families.ids():
                # a family revision is a fresh instance (new seed) at the same knobs, or the agent's repair
                info = BuildInfo(revision=meta.revision + 1, parent_task_id=event.task_id,
                                 builder=str(getattr(meta, "builder", "family")),
                                 extra={"feedback_round": event.attempt, "feedback": feedback})
                family = self.families.get(meta.template)
                return [self.flow.build(card, family, plan_of(meta, info.revision), info, previous=previous.root,
                                        feedback=feedback)]
            template = self.templates.get(meta.template)
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
            if meta.template in self.families.ids():
                record, revised = self._harden_family(event, card, meta, previous.root, diagnosis)
                put_json(self.ctx.store, hardening_report_key(event.task_id, event.round),
                         {**record, "new_pattern": new_pattern})
                return revised
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

    def _harden_family(self, event: HardeningRequested, card: SkillCard, meta: Any, previous: Path,
                       diagnosis: dict[str, Any]) -> tuple[dict[str, Any], list[Payload]]:
        """Raise the family's next knob; the revision records which knobs changed."""
        family = self.families.get(meta.template)
        builder = str(getattr(meta, "builder", "family"))
        plan, changes = harden_family(family.spec, meta, revision=meta.revision + 1)
        record: dict[str, Any] = {"task_id": event.task_id, "round": event.round, "diagnosis": diagnosis,
                                  "family": family.spec.id, "knob_changes": [c.to_dict() for c in changes]}
        if not changes and builder != "llm":
            return {**record, "outcome": "no_harder_variant"}, []
        info = BuildInfo(revision=meta.revision + 1, parent_task_id=event.task_id, builder=builder,
                         extra={"hardening_round": event.round, "hardening": diagnosis, "feedback_round": 0})
        built = self.flow.build(card, family, plan, info, previous=previous, diagnosis=diagnosis)
        return {**record, "outcome": "revised", "new_task_id": built.task_id}, [built]

    # -- helpers --------------------------------------------------------------------------
    def _card(self, skill_id: str) -> AbstractContextManager[SkillCard]:
        return skill_card(self.ctx.store, skill_id, self.ctx.scratch)

    @contextmanager
    def _workdir(self) -> Iterator[Path]:
        path = Path(tempfile.mkdtemp(prefix="build-", dir=self.ctx.scratch))
        try:
            yield path
        finally:
            remove_tree(path)  # the authoring agent's sandboxed commands wrote in it
