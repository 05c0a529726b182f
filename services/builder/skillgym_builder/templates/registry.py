"""Which templates exist and which one suits a skill (by taxonomy subcategory, then by fit)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache

from skillgym_builder.errors import UnknownTemplateError
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import Template
from skillgym_builder.templates.guidance_selection import GuidanceSelectionTemplate
from skillgym_builder.templates.index_repair import IndexRepairTemplate
from skillgym_builder.templates.procedure_dag import ProcedureDagTemplate
from skillgym_builder.templates.section_trace import SectionTraceTemplate


class TemplateRegistry:
    def __init__(self, templates: Iterable[Template]) -> None:
        self._templates = {template.spec.id: template for template in templates}

    def ids(self) -> list[str]:
        return list(self._templates)

    def get(self, template_id: str) -> Template:
        try:
            return self._templates[template_id]
        except KeyError:
            raise UnknownTemplateError(f"no template {template_id!r}", template=template_id) from None

    def candidates(self, card: SkillCard, preferred: Iterable[str] = ()) -> list[Template]:
        """Templates for the skill's subcategory first, then general ones; preferred ids lead."""
        sub = card.record.subcategory or card.record.category
        ordered = [self._templates[t] for t in preferred if t in self._templates]
        ordered += [t for t in self._templates.values() if sub and sub in t.spec.subcategories]
        # general templates in an order that depends on the skill, so a corpus spreads over every
        # reasoning profile instead of piling onto whichever template is listed first
        general = [t for t in self._templates.values() if not t.spec.subcategories]
        ordered += sorted(general, key=lambda t: hashlib.sha256(f"{card.record.skill_id}:{t.spec.id}".encode()).digest())
        seen: set[str] = set()
        return [t for t in ordered if not (t.spec.id in seen or seen.add(t.spec.id))]  # type: ignore[func-returns-value]


@lru_cache(maxsize=1)
def registry() -> TemplateRegistry:
    return TemplateRegistry([SectionTraceTemplate(), ProcedureDagTemplate(), GuidanceSelectionTemplate(), IndexRepairTemplate()])
