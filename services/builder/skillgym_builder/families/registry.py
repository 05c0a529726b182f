"""Which families exist, and which one a skill gets: every family's suitability verdict is
kept, so a skill that no family fits is skipped (or handed to the LLM builder) with the reasons."""

from __future__ import annotations

import hashlib
import importlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from skillgym_builder.errors import UnknownTemplateError
from skillgym_builder.families.base import Family, Fit, family_ids, load_family_spec
from skillgym_builder.skillcard import SkillCard

NO_FAMILY = "no_family_fits"
# A verdict that only says the skill lacks what one family needs (it ships no script) does not
# explain a skip: the other families' shared reason does.
UNINFORMATIVE = frozenset({"no_script"})


@dataclass(frozen=True)
class Choice:
    """The gate's decision for one skill: the family to build with (None: none fits) and every verdict."""

    family: Family | None
    fits: dict[str, Fit]
    runners_up: tuple[Family, ...] = ()  # the other fitting families, next best first

    @property
    def skip_reason(self) -> str:
        """Why no family fits, as one code: shared by every verdict, else ``no_family_fits``."""
        codes = Counter(fit.code for fit in self.fits.values() if not fit.fits and fit.code not in UNINFORMATIVE)
        if len(codes) == 1:
            return next(iter(codes))
        return NO_FAMILY

    def record(self) -> dict[str, Any]:
        return {
            "family": self.family.spec.id if self.family else None,
            "fits": {fid: fit.model_dump() for fid, fit in self.fits.items()},
        }


class FamilyRegistry:
    def __init__(self, families: Iterable[Family]) -> None:
        self._families = {family.spec.id: family for family in families}

    def ids(self) -> list[str]:
        return list(self._families)

    def all(self) -> list[Family]:
        return list(self._families.values())

    def get(self, family_id: str) -> Family:
        try:
            return self._families[family_id]
        except KeyError:
            raise UnknownTemplateError(f"no family {family_id!r}", family=family_id) from None

    def assess(self, card: SkillCard) -> dict[str, Fit]:
        return {fid: family.suitability(card) for fid, family in self._families.items()}

    def choose(self, card: SkillCard, preferred: Iterable[str] = ()) -> Choice:
        """The fitting family named first in ``preferred``, else the strongest fit (a served
        subcategory beats other evidence); ties go by a hash of the skill, so a corpus spreads."""
        fits = self.assess(card)
        fitting = [fid for fid, fit in fits.items() if fit.fits]
        named = [fid for fid in preferred if fid in fitting]
        if not fitting:
            return Choice(None, fits)
        ranked = sorted(fitting, key=lambda fid: (fits[fid].strength, _spread(card, fid)), reverse=True)
        if named:
            ranked = [named[0], *(fid for fid in ranked if fid != named[0])]
        return Choice(self._families[ranked[0]], fits, tuple(self._families[fid] for fid in ranked[1:]))

    def nearest(self, card: SkillCard) -> Family:
        """The family whose seed task an LLM builder adapts when no family fits: same category
        first, then the same spread as :meth:`choose`."""
        category = card.record.category
        return max(self._families.values(), key=lambda f: (f.spec.category == category, _spread(card, f.spec.id)))


def _spread(card: SkillCard, family_id: str) -> bytes:
    return hashlib.sha256(f"{card.record.skill_id}:{family_id}".encode()).digest()


@lru_cache(maxsize=1)
def registry() -> FamilyRegistry:
    """Every shipped family, its generator named by ``generator`` in its ``family.json``."""
    families = []
    for family_id in family_ids():
        module_name, _, class_name = load_family_spec(family_id).generator.partition(":")
        family = getattr(importlib.import_module(module_name), class_name)()
        if family.spec.id != family_id:
            raise ValueError(f"{module_name}:{class_name} builds {family.spec.id!r}, not {family_id!r}")
        families.append(family)
    return FamilyRegistry(families)
