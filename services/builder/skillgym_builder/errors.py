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


class LLMRequiredError(BuildError):
    """The builder agent failed where ``require_llm`` forbids falling back to the family instance
    or a text template; ``llm_error`` holds the agent's error."""

    reason = "llm_required"
