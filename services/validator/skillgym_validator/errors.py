"""Typed errors of the validator."""

from __future__ import annotations

from skillgym_core.errors import SkillGymError, TransientError


class ValidatorError(SkillGymError):
    reason = "validator"


class BaselineEndpointError(TransientError):
    """The baseline model's endpoint failed or answered something that is not a chat completion."""

    reason = "baseline_endpoint"
