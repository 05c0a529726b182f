"""The reward modes: the verdict, the rubric's graded score, and the rubric less a capped
penalty per malformed call; a verifier failure grades 0 in every mode."""

from __future__ import annotations

import pytest
from skillgym_core.taskrun import VerifierOutcome
from skillgym_envserver.rewards import components, reward


def _outcome(score: float, passed: bool) -> VerifierOutcome:
    return VerifierOutcome(score, {"reward": score}, passed, None if passed else "verifier_rejected", None)


def test_partial_work_scores_in_rubric_mode_only() -> None:
    parts = components(_outcome(0.6, passed=False), malformed_calls=0, penalty=0.1, cap=0.5)
    assert reward("binary", parts) == 0.0
    assert reward("rubric", parts) == pytest.approx(0.6)
    assert reward("shaped", parts) == pytest.approx(0.6)


def test_malformed_calls_cost_in_shaped_mode_up_to_the_cap() -> None:
    passed = _outcome(1.0, passed=True)
    assert reward("shaped", components(passed, 2, 0.1, 0.5)) == pytest.approx(0.8)
    assert reward("shaped", components(passed, 40, 0.1, 0.5)) == pytest.approx(0.5)
    assert reward("binary", components(passed, 40, 0.1, 0.5)) == 1.0


def test_tampered_or_broken_verification_grades_zero() -> None:
    failed = VerifierOutcome.failed("tampered_inputs")
    parts = components(failed, 0, 0.1, 0.5)
    assert reward("binary", parts) == reward("rubric", parts) == 0.0
    assert reward("shaped", components(failed, 3, 0.1, 0.5)) == pytest.approx(-0.3)
