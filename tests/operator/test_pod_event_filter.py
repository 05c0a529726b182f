"""Which pod events need the run read back: only those that may change its status."""

from __future__ import annotations

from skillgym_operator.handlers import _nothing_new
from skillgym_operator.status import PodVerdict

PENDING, RUNNING = PodVerdict("Pending"), PodVerdict("Running")
DONE = PodVerdict("Succeeded", "ok", 0, "Completed", "command exited with 0", True)


def test_an_unknown_run_is_always_read() -> None:
    assert not _nothing_new(None, 1, PENDING)


def test_a_finished_run_ignores_further_pod_events() -> None:
    assert _nothing_new((1, "Succeeded"), 1, DONE)
    assert _nothing_new((2, "Failed"), 1, RUNNING)


def test_the_same_phase_of_the_same_attempt_is_nothing_new() -> None:
    assert _nothing_new((1, "Pending"), 1, PENDING)
    assert _nothing_new((1, "Running"), 1, RUNNING)


def test_a_new_phase_a_final_verdict_or_another_attempt_is_read() -> None:
    assert not _nothing_new((1, "Pending"), 1, RUNNING)
    assert not _nothing_new((1, "Running"), 1, DONE)
    assert not _nothing_new((1, "Retrying"), 2, PENDING)


def test_only_runs_awaiting_a_retry_or_a_pod_removal_keep_a_housekeeping_timer() -> None:
    from skillgym_operator.reconcile import housekeeping_pending

    assert housekeeping_pending({"phase": "Retrying"})
    assert housekeeping_pending({"phase": "Succeeded"}) and housekeeping_pending({"phase": "Failed"})
    assert not housekeeping_pending({"phase": "Succeeded", "podDeleted": True})
    assert not any(housekeeping_pending({"phase": p}) for p in ("Pending", "Running", "Queued"))
    assert not housekeeping_pending({})
