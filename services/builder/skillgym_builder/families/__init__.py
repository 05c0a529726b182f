"""Task families: per-category generators of tasks in which the agent does what the skill
teaches; :func:`registry` lists them and picks one per skill."""

from skillgym_builder.families.base import Family, FamilySpec, Fit, SkillClaim
from skillgym_builder.families.registry import Choice, FamilyRegistry, registry

__all__ = ["Choice", "Family", "FamilyRegistry", "FamilySpec", "Fit", "SkillClaim", "registry"]
