"""The family kit: everything a task family needs from SkillGym, and all a family outside this
package should import. A family is a class with a ``spec`` and two methods:

- ``suitability(card) -> Fit``: whether it can build a task that exercises this skill, and why;
- ``instantiate(card, seed, knobs) -> TemplateOutput``: one instance's files, generated from the
  seed at the difficulty the knobs set; raise :class:`UnsuitableSkillError` when the skill lacks
  what the instance needs.

Its home folder holds ``family.json`` (read with :func:`load_family_spec`), the in-sandbox checker
``verify.py`` (shipped into the task with :func:`verifier_files`; it scores the rubric items with
the ``checks`` runner), and ``seed_skill/SKILL.md``, its example skill. The builder records how
each instance uses its skill (``skill_usage``) and never builds one that uses it not at all.

Register a family from your own package under the ``skillgym.families`` entry-point group
(``<family id> = "<package>"``); ``skillgym families new NAME`` writes a working one to start from."""

from __future__ import annotations

from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.families.base import ENTRY_POINT_GROUP, Family, FamilySpec, Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, skill_reader, verifier_files
from skillgym_builder.families.evidence import SkillEvidence
from skillgym_builder.families.knobs import validate as validate_knobs
from skillgym_builder.families.render import RenderJob
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import RubricItem, TemplateOutput

__all__ = [
    "ENTRY_POINT_GROUP",
    "Family",
    "FamilySpec",
    "Fit",
    "RenderJob",
    "RubricItem",
    "SkillCard",
    "SkillClaim",
    "SkillEvidence",
    "TemplateOutput",
    "UnsuitableSkillError",
    "agent_solution",
    "load_family_spec",
    "requirements",
    "rubric",
    "skill_reader",
    "validate_knobs",
    "verifier_files",
]
