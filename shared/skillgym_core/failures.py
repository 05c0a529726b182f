"""How a worker tells failures apart. Permanent ones (poison, contract violations, errors typed
not retryable) go to the DLQ at once; ordinary handler exceptions are retried a bounded number
of times, then dead-lettered; transient ones (a dependency that is down) are waited out for as
long as they last and never cost the event an attempt."""

from __future__ import annotations

from enum import Enum
from typing import Any

from skillgym_core.errors import DependencyUnavailable, SkillGymError, TransientError


class FailureKind(Enum):
    PERMANENT = "permanent"
    RETRYABLE = "retryable"
    TRANSIENT = "transient"


def classify(exc: BaseException) -> FailureKind:
    if isinstance(exc, SkillGymError) and not exc.retryable:
        return FailureKind.PERMANENT
    if isinstance(exc, TransientError):
        return FailureKind.TRANSIENT
    return FailureKind.RETRYABLE


def dependency_of(exc: TransientError) -> str:
    """The dependency a transient failure waits on: the one the error names, else its reason."""
    if isinstance(exc, DependencyUnavailable):
        return exc.dependency
    return str(exc.details.get("dependency") or exc.reason)


def describe(exc: BaseException) -> dict[str, Any]:
    """An error as structured data (typed errors keep their reason and details)."""
    if isinstance(exc, SkillGymError):
        return exc.to_dict()
    return {"error": type(exc).__name__, "message": str(exc)}


class ProcessingInterrupted(DependencyUnavailable):
    """A record could not be settled because ``dependency`` failed during ``action``; the
    consumer rewinds and the record is delivered again once the dependency answers."""

    reason = "interrupted"

    @classmethod
    def during(cls, action: str, dependency: str, cause: BaseException, **where: Any) -> ProcessingInterrupted:
        return cls(
            f"{action} failed ({dependency}): {type(cause).__name__}: {cause}",
            dependency=dependency,
            action=action,
            cause=describe(cause),
            **where,
        )

    @property
    def action(self) -> str:
        return str(self.details["action"])


def backoff_delay(base_s: float, cap_s: float, failures: int) -> float:
    """Capped exponential backoff after ``failures`` consecutive failures (1, 2, ...)."""
    return min(cap_s, base_s * 2 ** max(0, failures - 1))
