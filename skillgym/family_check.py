"""The conformance suite every task family must pass, shipped or installed from a package of
its own (``skillgym families check ID``): on each skill it fits, its easy, medium and hard
presets build; the same seed gives the same task and another seed another one; the reference
solution uses the skill (usage recorded, never ``none``); and the medium task is approved by
every reviewer gate (validity, probes, mutation score >= 0.9 on each rubric item, alternatives)
and proven valid by the validator in the sandbox. A family whose own task its review refuses fails."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families import registry
from skillgym_builder.families.base import Family
from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan
from skillgym_builder.package import BuildInfo
from skillgym_builder.skillcard import SkillCard, card_from_folder
from skillgym_builder.templates.base import TemplateOutput
from skillgym_core.contracts.skill import SkillRecord
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_core.ids import hash_tree
from skillgym_core.sandbox.local import LocalSandbox

PRESETS = ("easy", "medium", "hard")
MIN_MUTATION_SCORE = 0.9


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class SkillConformance:
    skill: str
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)


@dataclass
class FamilyConformance:
    family: str
    skills: list[SkillConformance] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.skills) and all(skill.passed for skill in self.skills)

    def record(self) -> dict[str, Any]:
        return {"family": self.family, "passed": self.passed,
                "skills": [{"skill": s.skill, "passed": s.passed,
                            "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in s.checks]}
                           for s in self.skills]}


def card_of(folder: Path, family: Family) -> SkillCard:
    spec = family.spec
    record = SkillRecord(skill_id=f"conformance-{folder.name}", name=folder.name, description="", source=str(folder),
                         content_hash=hash_tree(folder), category=spec.category,
                         subcategory=spec.subcategories[0] if spec.subcategories else None, accepted=True)
    return card_from_folder(record, folder)


def _same(a: TemplateOutput, b: TemplateOutput) -> bool:
    return (a.instruction, a.workspace, a.tests, a.solve_script) == (b.instruction, b.workspace, b.tests, b.solve_script)


class ConformanceRunner:
    def __init__(self, env_cache: Path, scratch: Path, *, review: bool = True) -> None:
        self.env_cache = env_cache
        self.scratch = scratch
        self.review = review
        self.provider = LocalVenvProvider(env_cache)
        self.materialiser = FamilyMaterialiser(LocalSandbox(), self.provider, scratch / "build")

    def family(self, family_id: str, skill_dirs: Iterable[Path]) -> FamilyConformance:
        family = registry().get(family_id)
        report = FamilyConformance(family_id)
        for folder in skill_dirs:
            report.skills.append(self.skill(family, card_of(Path(folder), family)))
        return report

    def skill(self, family: Family, card: SkillCard) -> SkillConformance:
        result = SkillConformance(card.name)
        fit = family.suitability(card)
        result.checks.append(Check("fits", fit.fits, fit.reason))
        if not fit.fits:
            return result
        built: dict[str, TemplateOutput] = {}
        for preset in PRESETS:
            knobs = knob_rules.preset(family.spec, preset, _rng(card, family))
            try:
                built[preset] = self.materialiser.instance(family, card, FamilyPlan(seed=0, knobs=knobs, fit=fit))
                result.checks.append(Check(f"preset:{preset}", True, knob_rules.difficulty_label(family.spec, knobs)))
            except UnsuitableSkillError as exc:
                result.checks.append(Check(f"preset:{preset}", False, str(exc)[:300]))
        medium = built.get("medium")
        if medium is None:
            return result
        plan = FamilyPlan(seed=0, knobs=medium.metadata["knobs"], fit=fit)
        again = self.materialiser.instance(family, card, plan)
        result.checks.append(Check("deterministic", _same(medium, again), "seed 0 built twice"))
        other = self.materialiser.instance(family, card, FamilyPlan(seed=1, knobs=plan.knobs, fit=fit))
        result.checks.append(Check("varies", other.workspace != medium.workspace, "seeds 0 and 1"))
        usage = medium.metadata.get("skill_usage") or {}
        result.checks.append(Check("uses_skill", usage.get("kind") not in (None, "none"), str(usage.get("kind"))))
        if self.review:
            result.checks += self._gates(family, card, medium)
        return result

    def _gates(self, family: Family, card: SkillCard, output: TemplateOutput) -> list[Check]:
        from skillgym_reviewer import ReviewerSettings, review_task_dir
        from skillgym_validator.settings import ValidatorSettings
        from skillgym_validator.validation import validate_task_dirs

        with tempfile.TemporaryDirectory(prefix="conformance-", dir=self.scratch) as work:
            _, task = self.materialiser.write(Path(work) / "task", card, family.spec, output, BuildInfo(builder="family"))
            review = review_task_dir(task.root, ReviewerSettings(env_cache=self.env_cache, mutation_llm_solutions=0))
            mutation = review.mutation or {}
            score, unkilled = mutation.get("score"), mutation.get("unkilled_items") or []
            strong = score is not None and score >= MIN_MUTATION_SCORE and not unkilled
            checks = [Check("review", review.passed, "; ".join(review.reasons)[:400]),
                      Check("mutation", strong, f"score {score}, items no wrong result failed: {unkilled or 'none'}")]
            record = validate_task_dirs([task.root], ValidatorSettings(oracle_runs=1, env_cache=self.env_cache))[0]
            checks.append(Check("valid", bool(record.get("valid")), str(record.get("reason") or "")[:300]))
        return checks


def _rng(card: SkillCard, family: Family) -> random.Random:
    return random.Random(f"{card.record.skill_id}:{family.spec.id}:knobs")
