"""Which pod events may change a run's status (the others cost no request)."""

from __future__ import annotations

from skillgym_operator.runs.reconciler import nothing_new
from skillgym_operator.status import PodVerdict

PENDING, RUNNING = PodVerdict("Pending"), PodVerdict("Running")
DONE = PodVerdict("Succeeded", "ok", 0, "Completed", "command exited with 0", True)


def state(attempt: int, phase: str) -> dict[str, object]:
    return {"attempt": attempt, "phase": phase}


def test_a_run_not_yet_started_hears_of_its_pod() -> None:
    assert not nothing_new({}, 1, PENDING)


def test_a_finished_run_ignores_further_pod_events() -> None:
    assert nothing_new(state(1, "Succeeded"), 1, DONE)
    assert nothing_new(state(2, "Failed"), 1, RUNNING)


def test_the_same_phase_of_the_same_attempt_is_nothing_new() -> None:
    assert nothing_new(state(1, "Pending"), 1, PENDING)
    assert nothing_new(state(1, "Running"), 1, RUNNING)


def test_a_new_phase_a_final_verdict_or_another_attempt_is_read() -> None:
    assert not nothing_new(state(1, "Pending"), 1, RUNNING)
    assert not nothing_new(state(1, "Running"), 1, DONE)
    assert not nothing_new(state(1, "Retrying"), 2, PENDING)


def test_an_earlier_attempts_pod_is_nothing_new() -> None:
    assert nothing_new(state(2, "Pending"), 1, DONE)


def test_only_runs_awaiting_a_retry_or_a_pod_removal_wait_for_housekeeping() -> None:
    from skillgym_operator.reconcile import housekeeping_pending

    assert housekeeping_pending({"phase": "Retrying"})
    assert housekeeping_pending({"phase": "Succeeded"}) and housekeeping_pending({"phase": "Failed"})
    assert not housekeeping_pending({"phase": "Succeeded", "podDeleted": True})
    assert not any(housekeeping_pending({"phase": p}) for p in ("Pending", "Running", "Queued"))
    assert not housekeeping_pending({})
