"""Each family's example skill (``seed_skill/`` in its home folder): the skill its seed task is
built for when an LLM builder adapts the family to a skill that no family fits."""

from __future__ import annotations

from pathlib import Path

from skillgym_core.contracts.skill import SkillRecord
from skillgym_core.ids import hash_tree

from skillgym_builder.families.base import FamilySpec, family_home
from skillgym_builder.skillcard import SkillCard, card_from_folder


def seed_skill_dir(family_id: str) -> Path:
    return Path(str(family_home(family_id).joinpath("seed_skill")))


def seed_card(spec: FamilySpec) -> SkillCard:
    folder = seed_skill_dir(spec.id)
    record = SkillRecord(
        skill_id=f"seed-{spec.id}", name=f"{spec.id}-example", description=f"example skill of the {spec.id} family",
        source=f"family:{spec.id}", content_hash=hash_tree(folder), category=spec.category,
        subcategory=spec.subcategories[0] if spec.subcategories else None, accepted=True,
    )
    return card_from_folder(record, folder)
