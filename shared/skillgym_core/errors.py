"""Typed errors. Each carries a machine-readable ``reason`` and the data needed to act on it."""

from __future__ import annotations

from typing import Any


class SkillGymError(Exception):
    """Base class: ``reason`` is a stable slug; ``details`` holds structured context."""

    reason: str = "error"

    def __init__(self, message: str, *, reason: str | None = None, **details: Any) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"error": type(self).__name__, "reason": self.reason, "message": str(self), **self.details}


class ContractError(SkillGymError):
    """A payload or artifact does not match its schema."""

    reason = "contract"


class PoisonEventError(SkillGymError):
    """An event that can never be processed (unparseable, unknown type or version)."""

    reason = "poison"


class TransientError(SkillGymError):
    """A failure worth retrying (network hiccup, busy broker)."""

    reason = "transient"


class StoreError(SkillGymError):
    reason = "store"


class ArtifactNotFound(StoreError):
    reason = "not_found"


class SandboxError(SkillGymError):
    """The sandbox itself failed (not the command inside it)."""

    reason = "sandbox"


class TaskFormatError(ContractError):
    """A task directory does not conform to the Harbor task layout."""

    reason = "task_format"
