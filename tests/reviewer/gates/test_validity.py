"""A verifier run the sandbox broke is the machine's failure, raised for a retry, not a defect
the task is rejected for; a verifier that itself failed still is one."""

from __future__ import annotations

import pytest
from skillgym_core.errors import SandboxError
from skillgym_core.taskrun import VerifierOutcome
from skillgym_reviewer.gates.validity import checker_crashed


def outcome(failure_type: str | None) -> VerifierOutcome:
    return VerifierOutcome(reward=0.0, rewards={}, passed=False, failure_type=failure_type, result=None,
                           detail="File exists: /tmp/skillgym-sandbox-1/host-0")


def test_a_broken_sandbox_is_raised_not_held_against_the_task() -> None:
    with pytest.raises(SandboxError) as caught:
        checker_crashed(outcome("verifier_sandbox_error"))
    assert caught.value.reason == "verifier_sandbox_error" and "host-0" in str(caught.value)


def test_a_verifier_that_timed_out_is_still_a_checker_error() -> None:
    assert checker_crashed(outcome("verifier_timeout")) == "verifier run ended with verifier_timeout"
