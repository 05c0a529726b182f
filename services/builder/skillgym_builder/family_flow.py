"""Building with a family: the family's instance for the skill directly, or (with an LLM
builder) the instance as the seed the builder agent adapts; a skill no family fits gets the
nearest family's example task as its seed. Revisions keep the family, its knobs and record
every knob that changed."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillgym_core import metrics
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.contracts.task import SkillGymMetadata
from skillgym_core.instruction_similarity import usage_tools
from skillgym_core.llm import LLMError
from skillgym_core.sandbox.janitor import remove_tree

from skillgym_builder.agent.author import LLMTaskAuthor, Seed
from skillgym_builder.errors import BuildError, UnsuitableSkillError
from skillgym_builder.fallback import fallback_metadata, record_fallback
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Family, Fit
from skillgym_builder.families.seeds import seed_card
from skillgym_builder.families.skill_script import UNUSABLE as SCRIPT_UNUSABLE
from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan, copy_task_parts, first_plan
from skillgym_builder.package import BuildInfo, write_task
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.variety import SAME_TASK, FamilyInstructions

log = logging.getLogger(__name__)


def family_metadata(meta: SkillGymMetadata, key: str) -> Any:
    """A key the family build added to ``[metadata]`` (kept as an extra field of the contract)."""
    return (meta.model_extra or {}).get(key)


def plan_of(meta: SkillGymMetadata, revision: int) -> FamilyPlan:
    """The plan a stored family task was built with (knobs, verdict, the lineage's knob changes),
    moved to a fresh instance for ``revision``."""
    return FamilyPlan(
        seed=revision,
        knobs={k: float(v) for k, v in (family_metadata(meta, "knobs") or {}).items()},
        fit=Fit.model_validate(family_metadata(meta, "suitability")),
        knob_changes=tuple(family_metadata(meta, "knob_changes") or ()),
    )


NO_SKILL_USE = "family_no_skill_use"
# Skip reasons that say only this family's task cannot serve the skill: the next fitting family is tried.
TRY_NEXT_FAMILY = frozenset({NO_SKILL_USE, SCRIPT_UNUSABLE, SAME_TASK})


def _same_task(family: Family, same: dict[str, Any]) -> UnsuitableSkillError:
    return UnsuitableSkillError(
        f"family {family.spec.id}'s task for this skill would say word for word what its task for skill "
        f"{same['skill_id']} says (similarity {same['similarity']}), though the two skills' tasks use different "
        "tools: the family does not vary its goal for this skill",
        family=family.spec.id, skip_reason=SAME_TASK, same_as=same,
    )


def _no_skill_use(family: Family, agent_error: str | None = None) -> UnsuitableSkillError:
    details = {"agent_error": agent_error[:500]} if agent_error else {}
    return UnsuitableSkillError(
        f"family {family.spec.id}'s task for this skill would be solved without anything the skill teaches "
        "(its reference solution runs none of its scripts, imports none of its libraries, uses none of its "
        "tools and reads none of the facts it states)",
        family=family.spec.id, skip_reason=NO_SKILL_USE, **details,
    )


class FamilyFlow:
    def __init__(self, ctx: ServiceContext, materialiser: FamilyMaterialiser, author: LLMTaskAuthor | None,
                 difficulty: str, *, require_llm: bool = False) -> None:
        self.ctx = ctx
        self.materialiser = materialiser
        self.author = author
        self.difficulty = difficulty
        self.require_llm = require_llm
        self.instructions = FamilyInstructions(ctx.store)

    def first(self, card: SkillCard, family: Family, fit: Fit) -> EnvBuilt:
        return self.build(card, family, first_plan(family, fit, self.difficulty, card.record.skill_id), BuildInfo())

    def build(
        self, card: SkillCard, family: Family, plan: FamilyPlan, info: BuildInfo, *,
        previous: Path | None = None, feedback: dict[str, Any] | None = None, diagnosis: dict[str, Any] | None = None,
    ) -> EnvBuilt:
        """The family's instance for ``card``, adapted by the builder agent when one is configured
        (the instance is the fallback). When the family does not fit ``card`` (``plan.fit``), only
        the agent can build: it gets the instance made for the family's example skill as its seed."""
        fits = plan.fit.fits
        use_llm = self.author is not None and info.builder in ("auto", "llm")
        if not fits and not use_llm:
            raise BuildError(f"family {family.spec.id} does not fit the skill and no LLM builder is configured",
                             reason="no_builder")
        source = card if fits else seed_card(family.spec)
        with self._workdir() as workdir:
            instance = self.materialiser.instance(family, source, plan)
            # Every family task must use its skill: run its script, import its library, use its tool
            # or read facts only it states. A fit by category alone (even one the skill's own evidence
            # corroborates) is no task about this skill: a log-triage procedure is not practised by
            # fixing an nginx configuration, nor a geopandas skill by a pandas profiling task.
            unused = fits and instance.metadata["skill_usage"]["kind"] == "none"
            if unused and not use_llm:
                raise _no_skill_use(family)
            output, builder, extra = instance, "family", dict(info.extra or {})
            if self.author is not None and use_llm:
                seed_root = workdir / "seed"
                self._write_seed(seed_root, source, family, instance)
                try:
                    authored = self.author.author(
                        card, family.spec, instance.blueprint or family.spec.blueprint, [], workdir / "agent",
                        seed=Seed(seed_root, fits, family.spec.id), previous=previous, feedback=feedback,
                        diagnosis=diagnosis,
                    )
                except (LLMError, BuildError) as exc:
                    if isinstance(exc, UnsuitableSkillError) or not fits:
                        raise
                    if unused:  # the family instance is no fallback for this skill
                        raise _no_skill_use(family, str(exc)) from exc
                    extra.update(fallback_metadata(exc, fallback="family", require_llm=self.require_llm))
                    log.warning("builder agent failed; using the family instance", extra={"error": str(exc)})
                else:
                    family_meta = {k: v for k, v in instance.metadata.items() if k not in ("skill_claim", "rubric")}
                    if not fits:
                        family_meta["family_seed_skill"] = source.name
                    output = replace(authored.output, metadata={**family_meta, **authored.output.metadata})
                    builder, extra["llm_usage"] = "llm", authored.usage
            tools = usage_tools(card.record.name, output.metadata.get("skill_usage") or {})
            same = self.instructions.same_task(family.spec.id, card.record.skill_id, tools, output.instruction)
            if same is not None:
                raise _same_task(family, same)
            built = self._save(workdir, card, family, output, replace(info, builder=builder, extra=extra))
            self.instructions.record(family.spec.id, card.record.skill_id, built.task_id, tools, output.instruction)
            return built

    def unfitted(self, card: SkillCard, family: Family, fit: Fit) -> EnvBuilt:
        """LLM builder only: a task for a skill no family fits, starting from ``family``'s example."""
        plan = FamilyPlan(seed=0, knobs=knob_rules.defaults(family.spec), fit=fit)
        return self.build(card, family, plan, BuildInfo(builder="llm"))

    def _write_seed(self, root: Path, card: SkillCard, family: Family, instance: Any) -> None:
        staging = root.parent / "seed-task"
        write_task(staging, card, family.spec, instance, BuildInfo(builder="family"))
        copy_task_parts(staging, root)
        shutil.copy2(staging / "task.toml", root / "task.toml")

    def _save(self, workdir: Path, card: SkillCard, family: Family, output: Any, info: BuildInfo) -> EnvBuilt:
        task_id, task = self.materialiser.write(workdir / "task", card, family.spec, output, info)
        package_key = self.ctx.save_task(task_id, task)
        metrics.TASKS_BUILT.labels(family.spec.id).inc()
        built = EnvBuilt(task_id=task_id, skill_id=card.record.skill_id, package_key=package_key,
                         template=family.spec.id, revision=info.revision, parent_task_id=info.parent_task_id,
                         builder=info.builder)
        record_fallback(self.ctx.store, built, info.extra)
        return built

    @contextmanager
    def _workdir(self) -> Iterator[Path]:
        self.ctx.scratch.mkdir(parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix="family-", dir=self.ctx.scratch))
        try:
            yield path
        finally:
            remove_tree(path)  # the authoring agent's sandboxed commands wrote in it
