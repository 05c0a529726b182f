"""Pure mappings from Kubernetes object state to the custom resources' status."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from skillgym_operator.resources import FETCH_CONTAINER, PUSH_CONTAINER, RUN_CONTAINER

# Waiting reasons that no amount of waiting fixes.
FATAL_WAITING = frozenset({"InvalidImageName", "ErrImageNeverPull", "CreateContainerConfigError"})
KILL_SIGNALS = frozenset({137, 143})
# Waiting reasons worth telling the run's owner while it waits (they may clear on their own).
STALLED_WAITING = frozenset({"ErrImagePull", "ImagePullBackOff"})


@dataclass(frozen=True)
class PodVerdict:
    """How one sandbox pod stands. ``terminal`` pods are done; ``retryable`` ones failed for
    reasons outside the command (infrastructure) and deserve another attempt."""

    phase: str
    outcome: str | None = None
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    terminal: bool = False
    retryable: bool = False

    def run_phase(self) -> str:
        if not self.terminal:
            return self.phase
        return "Succeeded" if self.outcome == "ok" and self.exit_code == 0 else "Failed"


def _statuses(pod: dict[str, Any], field: str) -> dict[str, dict[str, Any]]:
    return {item.get("name", ""): item for item in (pod.get("status") or {}).get(field) or []}


def _terminated(container: dict[str, Any] | None) -> dict[str, Any] | None:
    if not container:
        return None
    state = container.get("state") or {}
    return state.get("terminated") or None


def _waiting_reason(container: dict[str, Any] | None) -> str:
    return str(((container or {}).get("state") or {}).get("waiting", {}).get("reason") or "")


def _stalled(status: dict[str, Any], containers: Iterable[dict[str, Any]]) -> tuple[str, str]:
    """Why a pod that has not started its command is held up, if the cluster says: the
    scheduler found no node, or an image cannot be pulled (``("", "")`` when nothing is wrong)."""
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("reason") or "Unschedulable"), str(condition.get("message") or "")
    for container in containers:
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in STALLED_WAITING:
            return str(waiting["reason"]), f"{container.get('name', '')}: {waiting.get('message', '')}".strip(": ")
    return "", ""


def pod_verdict(pod: dict[str, Any]) -> PodVerdict:
    status = pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    inits = _statuses(pod, "initContainerStatuses")
    containers = _statuses(pod, "containerStatuses")
    run, push = containers.get(RUN_CONTAINER), containers.get(PUSH_CONTAINER)

    if status.get("reason") == "DeadlineExceeded":
        return PodVerdict("Failed", "timeout", None, "DeadlineExceeded", "pod ran past its deadline", True)
    if status.get("reason") == "Evicted":
        return PodVerdict("Failed", "killed", None, "Evicted", status.get("message", ""), True, True)

    fetch_done = _terminated(inits.get(FETCH_CONTAINER))
    if fetch_done and fetch_done.get("exitCode", 0) != 0:
        message = fetch_done.get("message") or "fetching the workspace failed"
        return PodVerdict("Failed", "error", None, "FetchFailed", message, True, True)
    for container in (*inits.values(), *containers.values()):
        reason = _waiting_reason(container)
        if reason in FATAL_WAITING:
            message = ((container.get("state") or {}).get("waiting") or {}).get("message", "")
            return PodVerdict("Failed", "error", None, reason, message, True, False)

    run_done = _terminated(run)
    if phase in ("Pending", "Unknown") or run_done is None:
        if phase in ("Succeeded", "Failed"):
            return PodVerdict("Failed", "error", None, "NoResult", "the command never ran", True, True)
        if phase == "Running":
            return PodVerdict("Running")
        return PodVerdict("Pending", None, None, *_stalled(status, (*inits.values(), *containers.values())))

    exit_code = int(run_done.get("exitCode", -1))
    termination_message = (run_done.get("message") or "").strip()
    if run_done.get("reason") == "OOMKilled":
        outcome, reason = "oom", "OOMKilled"
    elif termination_message == "timeout":
        outcome, reason = "timeout", "WallTimeout"
    elif exit_code in KILL_SIGNALS and termination_message != "ok":
        outcome, reason = "killed", str(run_done.get("reason") or "Killed")
    else:
        outcome, reason = "ok", "Completed"

    push_done = _terminated(push)
    if push_done is None:
        return PodVerdict("Running", outcome, exit_code, "Uploading", "uploading results")
    if push_done.get("exitCode", 0) != 0:
        message = push_done.get("message") or "uploading the results failed"
        return PodVerdict("Failed", "error", exit_code, "PushFailed", message, True, True)
    return PodVerdict(phase, outcome, exit_code, reason, f"command exited with {exit_code}", True)


def set_condition(
    conditions: list[dict[str, Any]], kind: str, ok: bool, reason: str, message: str, now: str
) -> list[dict[str, Any]]:
    """Return ``conditions`` with ``kind`` set; the transition time moves only when status flips."""
    status = "True" if ok else "False"
    result = []
    found = False
    for condition in conditions:
        if condition.get("type") == kind:
            found = True
            changed = condition.get("status") != status
            condition = {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": now if changed else condition.get("lastTransitionTime", now),
            }
        result.append(condition)
    if not found:
        result.append({"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now})
    return result


def sandbox_artifacts(output_prefix: str, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    prefix = output_prefix.rstrip("/")
    return {
        "stdout": f"{prefix}/stdout",
        "stderr": f"{prefix}/stderr",
        "result": f"{prefix}/result.json",
        "mounts": {m["target"]: m["resultKey"] for m in mounts if m.get("writable") and m.get("resultKey")},
    }


def retry_delay_s(attempt: int, base_s: float, max_s: float) -> float:
    return float(min(max_s, base_s * 2 ** max(0, attempt - 1)))


@dataclass(frozen=True)
class BuildState:
    done: bool
    failed: bool
    message: str = ""


def build_state(job: dict[str, Any] | None) -> BuildState:
    if job is None:
        return BuildState(False, False, "build not started")
    status = job.get("status") or {}
    for condition in status.get("conditions") or []:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            return BuildState(True, False, "image built")
        if condition.get("type") == "Failed":
            return BuildState(False, True, condition.get("message") or "image build failed")
    if status.get("succeeded"):
        return BuildState(True, False, "image built")
    return BuildState(False, False, "image building")


def training_phase(job: dict[str, Any], nodes: int) -> tuple[str, str]:
    """(phase, message) of a TrainingJob from its Indexed Job."""
    status = job.get("status") or {}
    for condition in status.get("conditions") or []:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            return "Succeeded", "all nodes finished"
        if condition.get("type") == "Failed":
            return "Failed", condition.get("message") or condition.get("reason") or "job failed"
    if int(status.get("succeeded") or 0) >= nodes:
        return "Succeeded", "all nodes finished"
    if int(status.get("active") or 0) > 0:
        restarts = int(status.get("failed") or 0)
        return "Running", f"{status.get('active')} of {nodes} nodes running, {restarts} restarts"
    return "Pending", "waiting for nodes"


def training_progress(progress: dict[str, Any]) -> dict[str, Any]:
    """The trainer's progress record (``progress.json``) reduced to what the status shows."""
    step = int(progress.get("step") or 0)
    total = int(progress.get("total_steps") or 0)
    metrics = {
        key: float(value)
        for key, value in (progress.get("metrics") or {}).items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    return {
        "progress": {"step": step, "totalSteps": total, "fraction": round(step / total, 4) if total else 0.0},
        "metrics": dict(sorted(metrics.items())),
    }


def checkpoint_keys(output_prefix: str, stored_keys: Iterable[str]) -> list[str]:
    """One key prefix per checkpoint directory under ``<output_prefix>/checkpoints/``."""
    base = f"{output_prefix.rstrip('/')}/checkpoints/"
    return sorted({base + key[len(base) :].split("/", 1)[0] for key in stored_keys if key.startswith(base)})
