"""Failure kinds: what is dead-lettered at once, what is retried a bounded number of times, and
what is waited out."""

from __future__ import annotations

import pytest
from skillgym_core.errors import (
    ArtifactNotFound,
    ContractError,
    DependencyUnavailable,
    PoisonEventError,
    SandboxError,
    StoreError,
    StoreUnavailable,
    TaskFormatError,
    TransientError,
)
from skillgym_core.failures import FailureKind, ProcessingInterrupted, backoff_delay, classify, dependency_of


class NotFixableByRetrying(SandboxError):
    retryable = False


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (PoisonEventError("unparseable"), FailureKind.PERMANENT),
        (ContractError("bad field"), FailureKind.PERMANENT),
        (TaskFormatError("no task.toml"), FailureKind.PERMANENT),
        (NotFixableByRetrying("no such image"), FailureKind.PERMANENT),
        (TransientError("blip"), FailureKind.TRANSIENT),
        (StoreUnavailable("connection refused"), FailureKind.TRANSIENT),
        (DependencyUnavailable("broker down", dependency="broker"), FailureKind.TRANSIENT),
        (ArtifactNotFound("no such key"), FailureKind.RETRYABLE),
        (StoreError("access denied", reason="access_denied"), FailureKind.RETRYABLE),
        (SandboxError("crashed"), FailureKind.RETRYABLE),
        (KeyError("x"), FailureKind.RETRYABLE),
    ],
)
def test_classify(error: BaseException, kind: FailureKind) -> None:
    assert classify(error) is kind


def test_store_unavailable_is_a_store_error_and_a_dependency_failure() -> None:
    error = StoreUnavailable("S3 get failed", endpoint="minio:9000", key="k")
    assert isinstance(error, StoreError) and isinstance(error, DependencyUnavailable)
    assert error.reason == "unreachable"
    assert error.dependency == "store"
    assert error.to_dict() == {
        "error": "StoreUnavailable",
        "reason": "unreachable",
        "message": "S3 get failed",
        "dependency": "store",
        "endpoint": "minio:9000",
        "key": "k",
    }


def test_dependency_of_reads_the_error() -> None:
    assert dependency_of(StoreUnavailable("down")) == "store"
    assert dependency_of(TransientError("endpoint down", dependency="baseline")) == "baseline"
    assert dependency_of(TransientError("verdict unreadable", reason="judge_malformed")) == "judge_malformed"
    assert dependency_of(TransientError("blip")) == "transient"


def test_an_interruption_says_where_and_why() -> None:
    cause = StoreUnavailable("S3 put failed", key="state/x")
    interrupted = ProcessingInterrupted.during("write done-marker", "store", cause, topic="t", partition=1, offset=7)
    assert isinstance(interrupted, TransientError)
    assert (interrupted.dependency, interrupted.action) == ("store", "write done-marker")
    assert interrupted.details["cause"]["key"] == "state/x"
    assert interrupted.to_dict()["offset"] == 7
    assert "StoreUnavailable: S3 put failed" in str(interrupted)


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [backoff_delay(0.2, 1.0, n) for n in range(1, 6)] == [0.2, 0.4, 0.8, 1.0, 1.0]
