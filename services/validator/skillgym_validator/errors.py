"""Typed errors of the validator."""

from __future__ import annotations

from typing import Any

from skillgym_core.errors import DependencyUnavailable, SkillGymError


class ValidatorError(SkillGymError):
    reason = "validator"


class BaselineEndpointError(SkillGymError):
    """The baseline model's endpoint refused the request or answered something that is not a
    chat completion."""

    reason = "baseline_endpoint"


class BaselineEndpointUnavailable(DependencyUnavailable):
    """The baseline model's endpoint could not be reached (after the client's own retries): a
    dependency that is down, waited out like the store or the broker."""

    reason = "baseline_endpoint"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message, dependency="baseline-llm", **details)
