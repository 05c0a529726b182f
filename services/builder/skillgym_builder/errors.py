"""Typed builder errors."""

from __future__ import annotations

from skillgym_core.errors import SkillGymError


class BuildError(SkillGymError):
    reason = "build"


class UnsuitableSkillError(BuildError):
    """The skill cannot support the template (the suitability gate)."""

    reason = "unsuitable"


class UnknownTemplateError(BuildError):
    reason = "unknown_template"
