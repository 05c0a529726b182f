"""Pure status mapping and reconcile decisions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from skillgym_operator.reconcile import cleanup_due, next_run_status, now_iso, retry_due
from skillgym_operator.runs.reconciler import nothing_new
from skillgym_operator.status import (
    build_state,
    checkpoint_keys,
    pod_verdict,
    retry_delay_s,
    set_condition,
    training_phase,
    training_progress,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RETRY_ARGS: dict[str, Any] = {
    "max_attempts": 1, "backoff_s": 1.0, "backoff_max_s": 1.0, "output_prefix": "p", "mounts": [], "now": NOW,
}


def term(name: str, code: int, message: str = "", reason: str = "Completed") -> dict[str, Any]:
    return {"name": name, "state": {"terminated": {"exitCode": code, "message": message, "reason": reason}}}


def pod(
    phase: str, run: dict[str, Any] | None = None, push: dict[str, Any] | None = None, **status: Any
) -> dict[str, Any]:
    containers = [c for c in (run, push) if c]
    return {
        "status": {
            "phase": phase,
            "initContainerStatuses": [term("fetch", 0)],
            "containerStatuses": containers,
            **status,
        }
    }


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (pod("Succeeded", term("run", 0, "ok"), term("push", 0)), ("Succeeded", "ok", 0, True, False)),
        (pod("Failed", term("run", 2, "ok"), term("push", 0)), ("Failed", "ok", 2, True, False)),
        (pod("Failed", term("run", 137, "timeout"), term("push", 0)), ("Failed", "timeout", 137, True, False)),
        (pod("Failed", term("run", 137, "", "OOMKilled"), term("push", 0)), ("Failed", "oom", 137, True, False)),
        (pod("Failed", term("run", 137, ""), term("push", 0)), ("Failed", "killed", 137, True, False)),
        (pod("Failed", term("run", 0, "ok"), term("push", 1)), ("Failed", "error", 0, True, True)),
        (
            pod("Running", term("run", 0, "ok"), {"name": "push", "state": {"running": {}}}),
            ("Running", "ok", 0, False, False),
        ),
        (pod("Failed", reason="DeadlineExceeded"), ("Failed", "timeout", None, True, False)),
        (pod("Failed", reason="Evicted"), ("Failed", "killed", None, True, True)),
        ({"status": {"phase": "Pending"}}, ("Pending", None, None, False, False)),
        ({}, ("Pending", None, None, False, False)),
        (pod("Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]),
         ("Pending", None, None, False, False)),
    ],
)
def test_pod_verdicts(body: dict[str, Any], expected: tuple[Any, ...]) -> None:
    verdict = pod_verdict(body)
    assert (verdict.run_phase(), verdict.outcome, verdict.exit_code, verdict.terminal, verdict.retryable) == expected


def test_fetch_failure_and_bad_image_are_errors() -> None:
    fetch_failed = {"status": {"phase": "Failed", "initContainerStatuses": [term("fetch", 1, "no such key")]}}
    verdict = pod_verdict(fetch_failed)
    assert (verdict.outcome, verdict.reason, verdict.message, verdict.retryable) == (
        "error",
        "FetchFailed",
        "no such key",
        True,
    )
    bad_image = {"status": {"phase": "Pending", "containerStatuses": [
        {"name": "run", "state": {"waiting": {"reason": "InvalidImageName", "message": "bad"}}}]}}  # fmt: skip
    verdict = pod_verdict(bad_image)
    assert (verdict.terminal, verdict.retryable, verdict.reason) == (True, False, "InvalidImageName")


def test_retry_then_give_up() -> None:
    failed = pod_verdict({"status": {"phase": "Failed", "reason": "Evicted"}})
    common = {"backoff_s": 2.0, "backoff_max_s": 60.0, "output_prefix": "p", "mounts": [], "now": NOW}
    first = next_run_status({"attempt": 1, "phase": "Running"}, failed, max_attempts=3, **common)
    assert first["phase"] == "Retrying" and first["retryAt"] == now_iso(NOW + timedelta(seconds=2))
    assert not retry_due(first, NOW) and retry_due(first, NOW + timedelta(seconds=3))
    last = next_run_status({"attempt": 3, "phase": "Running"}, failed, max_attempts=3, **common)
    assert (last["phase"], last["outcome"]) == ("Failed", "killed") and "artifacts" in last
    assert next_run_status({"phase": "Failed"}, failed, max_attempts=3, **common) == {}


def test_success_records_artifacts_and_cleanup_waits_for_ttl() -> None:
    done = pod_verdict(pod("Succeeded", term("run", 0, "ok"), term("push", 0)))
    mounts = [{"target": "/app", "writable": True, "resultKey": "r/app"}, {"target": "/tests", "writable": False}]
    update = next_run_status(
        {"attempt": 1, "phase": "Running"}, done, max_attempts=3, backoff_s=1, backoff_max_s=1,
        output_prefix="sandbox/runs/x/", mounts=mounts, now=NOW,
    )  # fmt: skip
    assert update["artifacts"] == {
        "stdout": "sandbox/runs/x/stdout", "stderr": "sandbox/runs/x/stderr",
        "result": "sandbox/runs/x/result.json", "mounts": {"/app": "r/app"},
    }  # fmt: skip
    assert not cleanup_due(update, 60, NOW + timedelta(seconds=30))
    assert cleanup_due(update, 60, NOW + timedelta(seconds=61))
    assert not cleanup_due({**update, "podDeleted": True}, 0, NOW + timedelta(days=1))


def test_running_transition_sets_started_once() -> None:
    running = pod_verdict(pod("Running", {"name": "run", "state": {"running": {}}}))
    update = next_run_status({"attempt": 1, "phase": "Pending"}, running, max_attempts=1, backoff_s=1,
                             backoff_max_s=1, output_prefix="p", mounts=[], now=NOW)  # fmt: skip
    assert update["phase"] == "Running" and update["startedAt"] == now_iso(NOW)
    assert next_run_status({"attempt": 1, "phase": "Running", "startedAt": "x"}, running, max_attempts=1,
                           backoff_s=1, backoff_max_s=1, output_prefix="p", mounts=[], now=NOW) == {}  # fmt: skip


def test_conditions_move_transition_time_only_on_flips() -> None:
    first = set_condition([], "Completed", False, "A", "", "t1")
    same = set_condition(first, "Completed", False, "B", "m", "t2")
    flipped = set_condition(same, "Completed", True, "C", "", "t3")
    assert same[0]["lastTransitionTime"] == "t1" and same[0]["reason"] == "B"
    assert flipped[0]["lastTransitionTime"] == "t3" and len(flipped) == 1


def test_backoff_doubles_and_caps() -> None:
    assert [retry_delay_s(a, 2, 10) for a in (1, 2, 3, 4)] == [2, 4, 8, 10]


def test_build_and_training_states() -> None:
    assert build_state(None).message == "build not started"
    assert build_state({"status": {"conditions": [{"type": "Complete", "status": "True"}]}}).done
    assert build_state({"status": {"conditions": [{"type": "Failed", "status": "True", "message": "x"}]}}).failed
    assert training_phase({"status": {"active": 2, "failed": 1}}, 2) == ("Running", "2 of 2 nodes running, 1 restarts")
    assert training_phase({"status": {"succeeded": 2}}, 2)[0] == "Succeeded"
    assert training_phase({"status": {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}}, 2) == (
        "Failed", "BackoffLimitExceeded")  # fmt: skip
    assert training_phase({}, 1)[0] == "Pending"
    progress = training_progress({"step": 3, "total_steps": 12, "metrics": {"loss": 0.5, "note": "x", "flag": True}})
    assert progress == {"progress": {"step": 3, "totalSteps": 12, "fraction": 0.25}, "metrics": {"loss": 0.5}}


def test_checkpoint_keys_group_files_by_directory() -> None:
    keys = ["t/r/checkpoints/step-2/a", "t/r/checkpoints/step-2/sub/b", "t/r/checkpoints/step-10/a", "t/r/other"]
    assert checkpoint_keys("t/r/", keys) == ["t/r/checkpoints/step-10", "t/r/checkpoints/step-2"]


def test_a_pending_pod_says_what_holds_it_up() -> None:
    placed = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 nodes are available"}
    verdict = pod_verdict(pod("Pending", conditions=[placed]))
    assert (verdict.phase, verdict.reason, verdict.message) == ("Pending", "Unschedulable", "0/2 nodes are available")
    pulling = {"name": "run", "state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}}}
    verdict = pod_verdict(pod("Pending", pulling))
    assert (verdict.reason, verdict.message) == ("ErrImagePull", "run: not found")
    creating = {"name": "run", "state": {"waiting": {"reason": "ContainerCreating"}}}
    assert pod_verdict(pod("Pending", creating)).message == ""  # the normal way to start
    assert not pod_verdict(pod("Pending", pulling)).terminal  # a pull may yet succeed


def test_a_new_reason_to_wait_is_written_once() -> None:
    pending = {"phase": "Pending", "attempt": 1, "message": "pod created"}
    verdict = pod_verdict(pod("Pending", conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no nodes"}]))
    patch = next_run_status(pending, verdict, **RETRY_ARGS)
    assert patch == {"reason": "Unschedulable", "message": "no nodes"}
    assert next_run_status({**pending, **patch}, verdict, **RETRY_ARGS) == {}
    assert nothing_new({**pending, **patch}, 1, verdict) and not nothing_new(pending, 1, verdict)
    running = next_run_status({**pending, **patch}, pod_verdict(pod("Running")), **RETRY_ARGS)
    assert (running["phase"], running["reason"]) == ("Running", "")
