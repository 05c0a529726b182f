"""Decisions about a SandboxRun's next status, as pure functions of what was observed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from skillgym_operator.resources import TERMINAL_PHASES
from skillgym_operator.status import PodVerdict, retry_delay_s, sandbox_artifacts, set_condition


def now_iso(moment: datetime | None = None) -> str:
    return (moment or datetime.now(UTC)).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def next_run_status(
    current: dict[str, Any],
    verdict: PodVerdict,
    *,
    max_attempts: int,
    backoff_s: float,
    backoff_max_s: float,
    output_prefix: str,
    mounts: list[dict[str, Any]],
    now: datetime,
) -> dict[str, Any]:
    """The status patch after observing the current attempt's pod (empty if nothing changed)."""
    if current.get("phase") in TERMINAL_PHASES:
        return {}
    attempt = int(current.get("attempt") or 1)
    conditions = list(current.get("conditions") or [])
    stamp = now_iso(now)
    if verdict.terminal and verdict.retryable and attempt < max_attempts:
        retry_at = now + timedelta(seconds=retry_delay_s(attempt, backoff_s, backoff_max_s))
        return {
            "phase": "Retrying",
            "retryAt": now_iso(retry_at),
            "message": f"attempt {attempt} failed ({verdict.reason}): {verdict.message}",
            "conditions": set_condition(conditions, "Completed", False, verdict.reason, verdict.message, stamp),
        }
    if verdict.terminal:
        phase = verdict.run_phase()
        patch: dict[str, Any] = {
            "phase": phase,
            "outcome": verdict.outcome,
            "exitCode": verdict.exit_code,
            "reason": verdict.reason,
            "message": verdict.message,
            "finishedAt": stamp,
            "conditions": set_condition(conditions, "Completed", True, verdict.reason, verdict.message, stamp),
        }
        if verdict.outcome != "error":
            patch["artifacts"] = sandbox_artifacts(output_prefix, mounts)
        return patch
    if verdict.phase != current.get("phase"):
        patch = {"phase": verdict.phase, "reason": verdict.reason, "message": verdict.message or verdict.phase.lower()}
        if verdict.phase == "Running" and not current.get("startedAt"):
            patch["startedAt"] = stamp
            patch["conditions"] = set_condition(conditions, "Started", True, "PodRunning", "", stamp)
        return patch
    if verdict.message and verdict.message != current.get("message"):
        return {"reason": verdict.reason, "message": verdict.message}  # why it still waits, as the cluster says
    return {}


def retry_due(status: dict[str, Any], now: datetime) -> bool:
    return status.get("phase") == "Retrying" and parse_iso(str(status.get("retryAt") or now_iso(now))) <= now


def cleanup_due(status: dict[str, Any], ttl_s: float, now: datetime) -> bool:
    if status.get("phase") not in TERMINAL_PHASES or status.get("podDeleted"):
        return False
    finished = status.get("finishedAt")
    return finished is None or parse_iso(str(finished)) + timedelta(seconds=ttl_s) <= now


def housekeeping_pending(status: dict[str, Any]) -> bool:
    """Whether the run waits for housekeeping: a retry, or a finished pod to remove."""
    return status.get("phase") == "Retrying" or (status.get("phase") in TERMINAL_PHASES and not status.get("podDeleted"))
