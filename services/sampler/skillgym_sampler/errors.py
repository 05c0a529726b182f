"""Typed errors of the sampler."""

from __future__ import annotations

from skillgym_core.errors import ContractError, SkillGymError


class SamplerError(SkillGymError):
    reason = "sampler"


class HarnessError(SamplerError):
    """A harness could not be started or produced no usable record of its run."""

    reason = "harness"


class UnknownHarnessError(HarnessError):
    reason = "unknown_harness"


class ConversionError(ContractError):
    """A harness log cannot be turned into an ATIF trajectory."""

    reason = "conversion"


class PlanError(ContractError):
    """A sampling plan file does not match its schema."""

    reason = "plan"
