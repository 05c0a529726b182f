"""What the operator does for SandboxRuns: one pod per attempt, the run's status from its pods,
retries with backoff, the namespace quota, image builds and the removal of finished pods.

Decisions read the freshest view of a run this process has (:class:`RunCache`), and every status
write is conditional on the resourceVersion that view had: a stale view costs a 409 and a re-read,
never a second pod or a lost update. So a run needs no finalizer (its pods and their policy
membership go with it through owner references) and no record of which handlers ran: a run
costs its pod, one status write per change, and Warning events when something went wrong."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from skillgym_operator import builders, kube
from skillgym_operator.builders.policy import UnsafePodError, require_safe_pod
from skillgym_operator.reconcile import cleanup_due, next_run_status, retry_due
from skillgym_operator.resources import LABEL_ATTEMPT, LABEL_RUN, SANDBOX_RUNS, TERMINAL_PHASES
from skillgym_operator.runs.cache import ACTIVE_PHASES, Key, RunCache, is_news, run_key
from skillgym_operator.runs.network import SandboxPolicy
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import InvalidSpecError, SandboxRunSpec, parse_sandbox_run
from skillgym_operator.status import PodVerdict, build_state, pod_verdict

log = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any], bool, str, str], None]
Decide = Callable[[dict[str, Any]], dict[str, Any] | None]
NOT_STARTED = (None, "", "Queued", "Building")
POD_DELETED = PodVerdict("Failed", "killed", None, "PodDeleted", "the pod disappeared", True, True)
WRITE_TRIES = 5


def _status(run: dict[str, Any]) -> dict[str, Any]:
    return dict(run.get("status") or {})


def not_started(run: dict[str, Any]) -> bool:
    return _status(run).get("phase") in NOT_STARTED and not _status(run).get("attempt")


def nothing_new(status: dict[str, Any], attempt: int, verdict: PodVerdict) -> bool:
    """Whether the run's known state already says what this pod's state says (then nothing is
    written or read): a finished run, an earlier attempt's pod, or the same phase of this attempt."""
    phase = status.get("phase")
    if phase in TERMINAL_PHASES:
        return True
    known_attempt = int(status.get("attempt") or 0)
    if attempt < known_attempt:
        return True
    if verdict.message and verdict.message != status.get("message"):
        return False
    return bool(known_attempt == attempt and not verdict.terminal and verdict.phase == phase)


def _refused(exc: UnsafePodError) -> dict[str, Any]:
    return {"phase": "Failed", "outcome": "error", "reason": exc.reason, "message": str(exc)[:1000]}


class Reconciler:
    def __init__(self, settings: OperatorSettings, emit: Emit = kube.post_event) -> None:
        self.settings = settings
        self.cache = RunCache()
        self.policy = SandboxPolicy(settings)
        self.emit = emit
        self.wake: Callable[[], None] = lambda: None
        self._build_polled: dict[Key, float] = {}

    # Watch events. The ``*_is_news`` filters run on kopf's event loop for every event, so that
    # the many that change nothing (a run's echo of this process's own write, a pod event that
    # repeats the run's phase) cost no handler call at all.

    def run_event_is_news(self, event_type: str | None, body: dict[str, Any]) -> bool:
        if event_type is None or event_type == "DELETED":
            return True
        return is_news(body, self.cache.get(*run_key(body)))

    def pod_event_is_news(self, event_type: str | None, pod: dict[str, Any]) -> bool:
        if event_type == "DELETED":
            return True
        labels = pod["metadata"].get("labels") or {}
        run = self.cache.get(str(pod["metadata"].get("namespace") or "default"), str(labels.get(LABEL_RUN)))
        if run is None:
            return True
        return not nothing_new(_status(run), int(labels.get(LABEL_ATTEMPT, "1")), pod_verdict(pod))

    def on_run_event(self, event_type: str | None, body: dict[str, Any]) -> None:
        namespace, name = run_key(body)
        if event_type == "DELETED":
            known = self.cache.forget(namespace, name, str(body["metadata"].get("uid") or "")) or body
            self._build_polled.pop((namespace, name), None)
            self._remove_pods(known)
            self.wake()  # its quota slot is free
            return
        run = self.cache.observe(body)
        if run["metadata"].get("deletionTimestamp"):
            return
        status = _status(run)
        if not status.get("phase"):
            self.start(run)
        elif (
            event_type is None  # listed at start-up: a pod may have been lost while no operator watched
            and status.get("phase") in ACTIVE_PHASES
            and not kube.pod_exists(namespace, str(status.get("podName") or ""))
        ):
            self._recover(run)

    def on_pod_event(self, event_type: str | None, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        labels = meta.get("labels") or {}
        namespace, run_name = str(meta.get("namespace") or "default"), labels[LABEL_RUN]
        attempt = int(labels.get(LABEL_ATTEMPT, "1"))
        verdict = pod_verdict(pod)
        if event_type == "DELETED" and not verdict.terminal:
            verdict = POD_DELETED
        run = self.cache.get(namespace, run_name)
        owners = [ref.get("uid", "") for ref in meta.get("ownerReferences") or [] if ref.get("kind") == "SandboxRun"]
        if run is None and owners and self.cache.deleted(namespace, run_name, owners[0]):
            return  # the last events of a deleted run's pod
        if run is None or attempt > int(_status(run).get("attempt") or 0):
            fresh = kube.get_custom(SANDBOX_RUNS, namespace, run_name)
            if fresh is None:
                return
            run = self.cache.observe(fresh)
        elif event_type != "DELETED" and nothing_new(_status(run), attempt, verdict):
            return
        self._apply_verdict(run, attempt, verdict)

    # Periodic chores: queued and building runs, retries, finished pods.

    def housekeep(self, now: datetime | None = None) -> None:
        now = now or datetime.now(UTC)
        for run in self.cache.chores():
            try:
                self._chore(run, now)
            except Exception:
                namespace, name = run_key(run)
                log.exception("housekeeping of SandboxRun %s/%s failed; it is tried again", namespace, name)

    def _chore(self, run: dict[str, Any], now: datetime) -> None:
        status = _status(run)
        phase = status.get("phase")
        if phase == "Queued":
            self.start(run)
        elif phase == "Building":
            if time.monotonic() - self._build_polled.get(run_key(run), 0.0) >= self.settings.build_poll_s:
                self.start(run)
        elif retry_due(status, now):
            self._retry(run, now)
        elif cleanup_due(status, self.settings.finished_pod_ttl_s, now):
            self._cleanup(run)

    # Starting a run.

    def start(self, run: dict[str, Any]) -> None:
        namespace, name = run_key(run)
        try:
            spec = parse_sandbox_run(dict(run.get("spec") or {}))
        except InvalidSpecError as exc:
            failed = {"phase": "Failed", "outcome": "error", "reason": exc.reason, "message": str(exc)}
            if self._write(run, lambda current: failed if not_started(current) else None):
                self.emit(run, True, "InvalidSpec", str(exc.details.get("errors"))[:1000])
            return
        active = self.cache.reserve(namespace, name, self.settings.max_active_runs_per_namespace)
        if active is not None:
            queued = {"phase": "Queued", "message": f"{active} runs active in {namespace}"}
            self._write(run, lambda c: queued if not_started(c) and _status(c).get("phase") != "Queued" else None)
            return
        try:
            image = self._image(run, spec)
            if image is None:
                return
            try:
                pod = self._safe_pod(run, spec, image, 1)
            except UnsafePodError as exc:
                self._refuse(run, exc, not_started)
                return
            pod_name = pod["metadata"]["name"]
            # Status first: it claims the attempt (a conditional write has one winner), and pod
            # events are matched against status.attempt.
            pending = {"phase": "Pending", "attempt": 1, "image": image, "podName": pod_name, "message": "pod created"}
            if not self._write(run, lambda current: pending if not_started(current) else None):
                return
            self._start_pod(namespace, pod)
            self._build_polled.pop((namespace, name), None)
            if self.settings.sandbox_normal_events:
                self.emit(run, False, "PodCreated", f"attempt 1: pod {pod_name} with image {image}")
        finally:
            self.cache.release(namespace, name)

    def _image(self, run: dict[str, Any], spec: SandboxRunSpec) -> str | None:
        """The task image, or None while it is being built (the run then says so)."""
        if spec.image:
            return spec.image
        if spec.build is None:
            return self.settings.default_task_image
        namespace, name = run_key(run)
        job_name = builders.build_job_name(spec.build, self.settings)
        state = build_state(kube.read_job(namespace, job_name))
        if state.done:
            return builders.image_reference(spec.build, self.settings)
        if state.failed:
            failed = {"phase": "Failed", "outcome": "error", "reason": "BuildFailed",
                      "message": f"image build {job_name} failed: {state.message}"[:1000]}  # fmt: skip
            if self._write(run, lambda current: failed if not_started(current) else None):
                self.emit(run, True, "BuildFailed", failed["message"])
            return None
        job = builders.kaniko_build_job(spec.build, namespace, self.settings)
        kube.create_if_absent(kube.batch().create_namespaced_job, namespace, job)
        building = {"phase": "Building", "message": f"building the task image in job {job_name}"}
        self._write(run, lambda c: building if not_started(c) and _status(c).get("phase") != "Building" else None)
        self._build_polled[(namespace, name)] = time.monotonic()
        return None

    def _safe_pod(self, run: dict[str, Any], spec: SandboxRunSpec, image: str, attempt: int) -> dict[str, Any]:
        pod = builders.sandbox_pod(run, spec, image, attempt, self.settings)
        require_safe_pod(pod["spec"])
        return pod

    def _refuse(self, run: dict[str, Any], exc: UnsafePodError, allowed: Callable[[dict[str, Any]], bool]) -> None:
        """Fail the run whose pod would break the sandbox policy (if ``allowed`` still holds)."""
        refused = _refused(exc)
        if self._write(run, lambda current: refused if allowed(current) else None):
            self.emit(run, True, "UnsafePod", str(exc)[:1000])

    def _attempt_image(self, status: dict[str, Any], spec: SandboxRunSpec) -> str:
        """The image the run's first attempt resolved (kept in its status), for any later pod of it."""
        return str(status.get("image") or spec.image or self.settings.default_task_image)

    def _start_pod(self, namespace: str, pod: dict[str, Any]) -> None:
        self.policy.ensure(namespace)
        kube.create_if_absent(kube.core().create_namespaced_pod, namespace, pod)

    def _recover(self, run: dict[str, Any]) -> None:
        status = _status(run)
        attempt = int(status.get("attempt") or 1)
        if status.get("phase") == "Running":
            self._apply_verdict(run, attempt, POD_DELETED)
            return
        spec = parse_sandbox_run(dict(run.get("spec") or {}))
        try:
            pod = self._safe_pod(run, spec, self._attempt_image(status, spec), attempt)
        except UnsafePodError as exc:
            self._refuse(run, exc, lambda current: _status(current).get("phase") == "Pending")
            return
        self._start_pod(run_key(run)[0], pod)

    # Following a run's pods.

    def _apply_verdict(self, run: dict[str, Any], attempt: int, verdict: PodVerdict) -> None:
        spec = parse_sandbox_run(dict(run.get("spec") or {}))

        def decide(current: dict[str, Any]) -> dict[str, Any] | None:
            status = _status(current)
            if current["metadata"].get("deletionTimestamp") or int(status.get("attempt") or 0) != attempt:
                return None
            return next_run_status(
                status,
                verdict,
                max_attempts=spec.max_attempts or self.settings.max_attempts,
                backoff_s=self.settings.retry_backoff_s,
                backoff_max_s=self.settings.retry_backoff_max_s,
                output_prefix=spec.output_prefix,
                mounts=[m.model_dump(by_alias=True) for m in spec.mounts],
                now=datetime.now(UTC),
            ) or None

        update = self._write(run, decide)
        if not update:
            return
        phase = update["phase"]
        if phase in TERMINAL_PHASES or phase == "Retrying":
            warning = phase != "Succeeded"
            if warning or self.settings.sandbox_normal_events:
                self.emit(run, warning, str(update.get("reason") or phase), str(update.get("message", "")))
            self.wake()
        if phase in TERMINAL_PHASES and self.settings.finished_pod_ttl_s == 0:
            self._cleanup(run)

    def _retry(self, run: dict[str, Any], now: datetime) -> None:
        namespace, name = run_key(run)
        status = _status(run)
        spec = parse_sandbox_run(dict(run.get("spec") or {}))
        attempt = int(status.get("attempt") or 1) + 1

        def due(current: dict[str, Any]) -> bool:
            return retry_due(_status(current), now) and int(_status(current).get("attempt") or 1) + 1 == attempt

        try:
            pod = self._safe_pod(run, spec, self._attempt_image(status, spec), attempt)
        except UnsafePodError as exc:
            self._refuse(run, exc, due)
            return
        pod_name = pod["metadata"]["name"]
        pending = {"phase": "Pending", "attempt": attempt, "podName": pod_name, "message": f"retry attempt {attempt}"}
        if not self._write(run, lambda current: pending if due(current) else None):
            return
        kube.ignore_missing(kube.core().delete_namespaced_pod, builders.pod_name(name, attempt - 1), namespace)
        self._start_pod(namespace, pod)
        if self.settings.sandbox_normal_events:
            self.emit(run, False, "Retrying", f"attempt {attempt}: pod {pod_name}")

    def _cleanup(self, run: dict[str, Any]) -> None:
        self._remove_pods(run)

        def removal(current: dict[str, Any]) -> dict[str, Any] | None:
            status = _status(current)
            return {"podDeleted": True} if status.get("phase") in TERMINAL_PHASES and not status.get("podDeleted") else None

        self._write(run, removal)

    def _remove_pods(self, run: dict[str, Any]) -> None:
        namespace, name = run_key(run)
        for attempt in range(1, int(_status(run).get("attempt") or 1) + 1):
            kube.ignore_missing(kube.core().delete_namespaced_pod, builders.pod_name(name, attempt), namespace)

    # Conditional status writes.

    def _write(self, run: dict[str, Any], decide: Decide) -> dict[str, Any] | None:
        """Write what ``decide`` makes of the freshest view of the run, on the condition that the
        run has not changed since; on a conflict read it again and decide again. Returns what was
        written (None: nothing to write, or the run is gone)."""
        namespace, name = run_key(run)
        current = self.cache.observe(run)
        for _ in range(WRITE_TRIES):
            update = decide(current)
            if not update:
                return None
            try:
                stored = kube.patch_status_if_unchanged(
                    SANDBOX_RUNS, namespace, name, update, current["metadata"].get("resourceVersion")
                )
            except kube.Conflict:
                fresh = kube.get_custom(SANDBOX_RUNS, namespace, name)
                if fresh is None:
                    return None
                current = self.cache.observe(fresh)
                continue
            if stored is None:
                return None
            self.cache.observe(stored)
            return update
        log.warning("SandboxRun %s/%s kept changing under %d status writes; left for the next event", namespace,
                    name, WRITE_TRIES)
        return None
