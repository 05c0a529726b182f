"""Typed errors. Each carries a machine-readable ``reason`` and the data needed to act on it."""

from __future__ import annotations

from typing import Any


class SkillGymError(Exception):
    """Base class: ``reason`` is a stable slug; ``details`` holds structured context.
    ``retryable`` is False for errors that no retry can fix (the event goes straight to its DLQ)."""

    reason: str = "error"
    retryable: bool = True

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
    retryable = False


class PoisonEventError(SkillGymError):
    """An event that can never be processed (unparseable, unknown type or version)."""

    reason = "poison"
    retryable = False


class TransientError(SkillGymError):
    """A failure worth retrying for as long as it lasts (network hiccup, busy broker, a
    dependency that is down): workers wait it out and never dead-letter the event over it."""

    reason = "transient"


class MalformedModelOutput(SkillGymError):
    """A model answered, but not in the form asked for (no verdict, a score out of range): worth
    a few more attempts, not an indefinite wait, since the model may well answer the same again."""

    reason = "model_output_malformed"


class DependencyUnavailable(TransientError):
    """A dependency (``store``, ``broker``, ...) could not be reached or refused service for now."""

    reason = "unavailable"

    def __init__(self, message: str, *, dependency: str, reason: str | None = None, **details: Any) -> None:
        super().__init__(message, reason=reason, dependency=dependency, **details)

    @property
    def dependency(self) -> str:
        return str(self.details["dependency"])


class StoreError(SkillGymError):
    reason = "store"


class StoreUnavailable(StoreError, DependencyUnavailable):
    """The store did not answer (connection refused, timeout, server busy or starting)."""

    reason = "unreachable"

    def __init__(self, message: str, *, reason: str | None = None, **details: Any) -> None:
        DependencyUnavailable.__init__(self, message, dependency="store", reason=reason, **details)


class ArtifactNotFound(StoreError):
    reason = "not_found"


class SandboxError(SkillGymError):
    """The sandbox itself failed (not the command inside it)."""

    reason = "sandbox"


class TaskFormatError(ContractError):
    """A task directory does not conform to the Harbor task layout."""

    reason = "task_format"
