"""kopf handlers: thin glue between watch events and the pure builders/status functions."""

from __future__ import annotations

import logging
import os
import signal
from datetime import UTC, datetime
from typing import Any, cast

import kopf
import kubernetes
from skillgym_core import keys
from skillgym_core.errors import ArtifactNotFound
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import get_json
from skillgym_core.store.factory import make_store

from skillgym_operator import builders, kube, leader
from skillgym_operator.builders import training
from skillgym_operator.builders.policy import UnsafePodError, require_safe_pod
from skillgym_operator.reconcile import cleanup_due, housekeeping_pending, next_run_status, now_iso, retry_due
from skillgym_operator.resources import (
    GROUP,
    LABEL_ATTEMPT,
    LABEL_RUN,
    LABEL_TRAINING,
    MANAGED_BY,
    SANDBOX_RUNS,
    TERMINAL_PHASES,
    TRAINING_JOBS,
    VERSION,
)
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import InvalidSpecError, SandboxRunSpec, parse_sandbox_run, parse_training_job
from skillgym_operator.status import (
    build_state,
    checkpoint_keys,
    pod_verdict,
    training_phase,
    training_progress,
)

SETTINGS = OperatorSettings()
MANAGED = {"app.kubernetes.io/managed-by": MANAGED_BY}


def _owner(kind: str, body: Any) -> dict[str, Any]:
    meta = body["metadata"]
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": kind,
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta.get("uid", "")},
    }


@kopf.on.startup(id="configure-operator")
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    kube.configure_client()
    settings.posting.level = logging.getLevelName(SETTINGS.posting_level)
    settings.scanning.disabled = SETTINGS.scanning_disabled
    settings.persistence.finalizer = f"{GROUP}/operator"
    settings.execution.max_workers = SETTINGS.handler_threads


@kopf.on.startup(id="leader-election")
def elect_leader(**_: Any) -> None:
    """With leader election on, the operator starts watching only once this replica leads."""
    if not SETTINGS.leader_election:
        return
    kube.configure_client()
    leader.lead(SETTINGS, kubernetes.client.CoordinationV1Api(kube.api_client()), on_lost=lambda: os.kill(os.getpid(), signal.SIGTERM))


@kopf.on.login(id="login")
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


@kopf.index("pods", labels={LABEL_RUN: kopf.PRESENT, **MANAGED}, id="active_sandbox_pods")
def active_sandbox_pods(namespace: str | None, name: str, status: Any, **_: Any) -> dict[str, str] | None:
    namespace = namespace or "default"
    return None if status.get("phase") in TERMINAL_PHASES else {namespace: name}


def _resolve_image(spec: SandboxRunSpec, namespace: str | None, patch: kopf.Patch) -> str:
    namespace = namespace or "default"
    if spec.image:
        return spec.image
    if spec.build is None:
        return SETTINGS.default_task_image
    name = builders.build_job_name(spec.build)
    state = build_state(kube.read_job(namespace, name))
    if state.done:
        return builders.image_reference(spec.build, SETTINGS)
    if state.failed:
        raise kopf.PermanentError(f"image build {name} failed: {state.message}")
    kube.create_if_absent(
        kube.batch().create_namespaced_job, namespace, builders.kaniko_build_job(spec.build, namespace, SETTINGS)
    )
    patch.status["phase"] = "Building"
    patch.status["message"] = f"building the task image in job {name}"
    raise kopf.TemporaryError(state.message, delay=SETTINGS.build_poll_s)


def _safe_pod(run: dict[str, Any], spec: SandboxRunSpec, image: str, attempt: int) -> dict[str, Any]:
    """The attempt's pod; :class:`UnsafePodError` when it would break the sandbox policy."""
    pod = builders.sandbox_pod(run, spec, image, attempt, SETTINGS)
    require_safe_pod(pod["spec"])
    return pod


def _attempt_image(status: dict[str, Any], spec: SandboxRunSpec) -> str:
    """The image the run's first attempt resolved (kept in its status), for any later pod of it."""
    return str(status.get("image") or spec.image or SETTINGS.default_task_image)


def _start_attempt(run: dict[str, Any], pod: dict[str, Any]) -> None:
    namespace = run["metadata"]["namespace"]
    kube.create_if_absent(
        kube.networking().create_namespaced_network_policy,
        namespace,
        builders.sandbox_network_policy(run, SETTINGS),
    )
    kube.create_if_absent(kube.core().create_namespaced_pod, namespace, pod)


def _refused(exc: UnsafePodError) -> dict[str, Any]:
    return {"phase": "Failed", "outcome": "error", "reason": exc.reason, "message": str(exc)[:1000]}


@kopf.on.create(GROUP, VERSION, SANDBOX_RUNS, id="start-sandbox-run")
def start_sandbox_run(
    body: kopf.Body,
    spec: kopf.Spec,
    namespace: str | None,
    patch: kopf.Patch,
    active_sandbox_pods: kopf.Index[str, str] | None = None,
    **_: Any,
) -> None:
    namespace = namespace or "default"
    try:
        run_spec = parse_sandbox_run(dict(spec))
    except InvalidSpecError as exc:
        patch.status.update({"phase": "Failed", "outcome": "error", "reason": exc.reason, "message": str(exc)})
        kopf.warn(body, reason="InvalidSpec", message=str(exc.details.get("errors"))[:1000])
        raise kopf.PermanentError(str(exc)) from exc
    active_pods: Any = active_sandbox_pods.get(namespace, []) if active_sandbox_pods is not None else []
    started = body.get("status") or {}
    if started.get("attempt") and started.get("phase") != "Queued":
        # Delivered again (kopf saw the run before its own record of this handler): the status says
        # the run has started, so only a pod lost between that status and its creation is made.
        if started.get("phase") == "Pending" and started.get("podName") not in active_pods:
            owner = _owner("SandboxRun", body)
            _start_attempt(owner, _safe_pod(owner, run_spec, _attempt_image(started, run_spec), int(started["attempt"])))
        return
    active = len(active_pods)
    if active >= SETTINGS.max_active_runs_per_namespace:
        patch.status.update({"phase": "Queued", "message": f"{active} runs active in {namespace}"})
        raise kopf.TemporaryError("namespace quota reached", delay=SETTINGS.queue_retry_s)
    image = _resolve_image(run_spec, namespace, patch)
    owner = _owner("SandboxRun", body)
    try:
        pod = _safe_pod(owner, run_spec, image, attempt=1)
    except UnsafePodError as exc:
        patch.status.update(_refused(exc))
        kopf.warn(body, reason="UnsafePod", message=str(exc)[:1000])
        raise kopf.PermanentError(str(exc)) from exc
    pod_name = pod["metadata"]["name"]
    # Status first: pod events are matched against status.attempt, so it must be set before the pod exists.
    kube.patch_custom_status(
        SANDBOX_RUNS,
        namespace,
        body["metadata"]["name"],
        {"phase": "Pending", "attempt": 1, "image": image, "podName": pod_name, "message": "pod created"},
    )
    _start_attempt(owner, pod)
    kopf.info(body, reason="PodCreated", message=f"attempt 1: pod {pod_name} with image {image}")


@kopf.index(GROUP, VERSION, SANDBOX_RUNS, id="sandbox_run_states")
def sandbox_run_states(namespace: str | None, name: str, status: Any, **_: Any) -> dict[tuple[str, str], Any]:
    return {(namespace or "default", name): (int(status.get("attempt") or 0), status.get("phase"))}


def _nothing_new(known: Any, attempt: int, verdict: Any) -> bool:
    """Whether the run's state as last watched already says what this pod event says (then no
    read of the run is needed): a finished run, or the same attempt in the same non-final phase."""
    if known is None:
        return False
    known_attempt, known_phase = known
    if known_phase in TERMINAL_PHASES:
        return True
    return bool(known_attempt == attempt and not verdict.terminal and verdict.phase == known_phase)


@kopf.on.event("pods", labels={LABEL_RUN: kopf.PRESENT, **MANAGED}, id="sandbox-pod-event")
def sandbox_pod_event(
    event: kopf.RawEvent,
    body: kopf.Body,
    namespace: str | None,
    labels: Any,
    sandbox_run_states: kopf.Index[tuple[str, str], Any] | None = None,
    **_: Any,
) -> None:
    namespace = namespace or "default"
    run_name, attempt = labels[LABEL_RUN], int(labels.get(LABEL_ATTEMPT, "1"))
    known = next(iter(sandbox_run_states.get((namespace, run_name), [])), None) if sandbox_run_states else None
    if event.get("type") != "DELETED" and _nothing_new(known, attempt, pod_verdict(dict(body))):
        return
    run = kube.get_custom(SANDBOX_RUNS, namespace, run_name)
    if run is None or run["metadata"].get("deletionTimestamp"):
        return
    status = run.get("status") or {}
    if int(status.get("attempt") or 0) != attempt:
        return
    verdict = pod_verdict(dict(body))
    if event.get("type") == "DELETED" and not verdict.terminal:
        verdict = type(verdict)("Failed", "killed", None, "PodDeleted", "the pod disappeared", True, True)
    spec = parse_sandbox_run(run["spec"])
    update = next_run_status(
        status,
        verdict,
        max_attempts=spec.max_attempts or SETTINGS.max_attempts,
        backoff_s=SETTINGS.retry_backoff_s,
        backoff_max_s=SETTINGS.retry_backoff_max_s,
        output_prefix=spec.output_prefix,
        mounts=[m.model_dump(by_alias=True) for m in spec.mounts],
        now=datetime.now(UTC),
    )
    if not update:
        return
    kube.patch_custom_status(SANDBOX_RUNS, namespace, run_name, update)
    if update["phase"] in TERMINAL_PHASES or update["phase"] == "Retrying":
        emit = kopf.info if update["phase"] == "Succeeded" else kopf.warn
        emit(
            cast(kopf.Body, run),
            reason=str(update.get("reason") or update["phase"]),
            message=str(update.get("message", "")),
        )
    if update["phase"] in TERMINAL_PHASES and SETTINGS.finished_pod_ttl_s == 0:
        kube.ignore_missing(kube.core().delete_namespaced_pod, body["metadata"]["name"], namespace)
        kube.patch_custom_status(SANDBOX_RUNS, namespace, run_name, {"podDeleted": True})


def _housekeeping_pending(status: Any, **_: Any) -> bool:
    """Only runs waiting for a retry or for their finished pod's removal get a timer: the others
    (running, or finished and cleaned up: most of them) cost nothing however many there are."""
    return housekeeping_pending(dict(status or {}))


@kopf.timer(GROUP, VERSION, SANDBOX_RUNS, interval=SETTINGS.housekeeping_interval_s, id="sandbox-housekeeping",
            when=_housekeeping_pending)
def sandbox_housekeeping(
    body: kopf.Body, spec: kopf.Spec, status: kopf.Status, namespace: str | None, name: str, **_: Any
) -> None:
    namespace = namespace or "default"
    now = datetime.now(UTC)
    current = dict(status)
    if retry_due(current, now):
        # kopf's view may predate this timer's own last retry: start a new attempt only if the run,
        # read now, still waits for one.
        fresh = kube.get_custom(SANDBOX_RUNS, namespace, name)
        current = dict((fresh or {}).get("status") or {})
        if fresh is None or not retry_due(current, now):
            return
        run_spec = parse_sandbox_run(dict(spec))
        attempt = int(current.get("attempt") or 1) + 1
        kube.ignore_missing(kube.core().delete_namespaced_pod, builders.pod_name(name, attempt - 1), namespace)
        owner = _owner("SandboxRun", body)
        try:
            pod = _safe_pod(owner, run_spec, _attempt_image(current, run_spec), attempt)
        except UnsafePodError as exc:
            kube.patch_custom_status(SANDBOX_RUNS, namespace, name, _refused(exc))
            kopf.warn(body, reason="UnsafePod", message=str(exc)[:1000])
            return
        pod_name = pod["metadata"]["name"]
        kube.patch_custom_status(
            SANDBOX_RUNS,
            namespace,
            name,
            {"phase": "Pending", "attempt": attempt, "podName": pod_name, "message": f"retry attempt {attempt}"},
        )
        _start_attempt(owner, pod)
        kopf.info(body, reason="Retrying", message=f"attempt {attempt}: pod {pod_name}")
    elif cleanup_due(current, SETTINGS.finished_pod_ttl_s, now):
        kube.delete_pods(namespace, {LABEL_RUN: name, **MANAGED})
        kube.patch_custom_status(SANDBOX_RUNS, namespace, name, {"podDeleted": True})


@kopf.on.delete(GROUP, VERSION, SANDBOX_RUNS, id="cleanup-sandbox-run")
def cleanup_sandbox_run(name: str, namespace: str | None, **_: Any) -> None:
    namespace = namespace or "default"
    kube.delete_pods(namespace, {LABEL_RUN: name, **MANAGED})
    kube.ignore_missing(
        kube.networking().delete_namespaced_network_policy, builders.network_policy_name(name), namespace
    )


@kopf.on.create(GROUP, VERSION, TRAINING_JOBS, id="start-training-job")
def start_training_job(body: kopf.Body, spec: kopf.Spec, namespace: str | None, patch: kopf.Patch, **_: Any) -> None:
    namespace = namespace or "default"
    try:
        job_spec = parse_training_job(dict(spec))
    except InvalidSpecError as exc:
        patch.status.update({"phase": "Failed", "message": str(exc)})
        raise kopf.PermanentError(str(exc)) from exc
    owner = _owner("TrainingJob", body)
    kube.create_if_absent(
        kube.core().create_namespaced_config_map, namespace, builders.training_config_map(owner, job_spec)
    )
    kube.create_if_absent(kube.core().create_namespaced_service, namespace, builders.training_service(owner))
    job = builders.training_job(owner, job_spec, SETTINGS)
    kube.create_if_absent(kube.batch().create_namespaced_job, namespace, job)
    patch.status.update(
        {
            "phase": "Pending",
            "jobName": job["metadata"]["name"],
            "outputPrefix": training.output_prefix(owner["metadata"]["name"], job_spec),
            "message": f"{job_spec.nodes} node(s) x {job_spec.gpus} GPU(s) requested",
        }
    )
    kopf.info(body, reason="JobCreated", message=f"indexed job {job['metadata']['name']}")


@kopf.on.event("batch", "v1", "jobs", labels={LABEL_TRAINING: kopf.PRESENT, **MANAGED}, id="training-job-event")
def training_job_event(body: kopf.Body, namespace: str | None, labels: Any, **_: Any) -> None:
    namespace = namespace or "default"
    name = labels[LABEL_TRAINING]
    training = kube.get_custom(TRAINING_JOBS, namespace, name)
    if training is None or training["metadata"].get("deletionTimestamp"):
        return
    status = training.get("status") or {}
    phase, message = training_phase(dict(body), int(training["spec"].get("nodes") or 1))
    if (phase, message) == (status.get("phase"), status.get("message")) or status.get("phase") in TERMINAL_PHASES:
        return
    kube.patch_custom_status(
        TRAINING_JOBS, namespace, name, {"phase": phase, "message": message, "updatedAt": now_iso()}
    )
    if phase != status.get("phase"):
        (kopf.warn if phase == "Failed" else kopf.info)(cast(kopf.Body, training), reason=phase, message=message)


@kopf.timer(GROUP, VERSION, TRAINING_JOBS, interval=SETTINGS.training_progress_interval_s, id="training-progress")
def training_progress_timer(name: str, namespace: str | None, status: kopf.Status, **_: Any) -> None:
    namespace = namespace or "default"
    if status.get("phase") not in ("Running", "Succeeded") or status.get("progressFinal"):
        return
    store = make_store(CommonSettings())
    prefix = str(status.get("outputPrefix") or keys.training_run(name, "")).rstrip("/")
    try:
        update = training_progress(get_json(store, f"{prefix}/progress.json"))
    except ArtifactNotFound:
        update = {}
    update["checkpoints"] = checkpoint_keys(prefix, store.list(f"{prefix}/checkpoints/"))
    update["progressFinal"] = status.get("phase") == "Succeeded"
    kube.patch_custom_status(TRAINING_JOBS, namespace, name, update)


@kopf.on.delete(GROUP, VERSION, TRAINING_JOBS, id="cleanup-training-job")
def cleanup_training_job(name: str, namespace: str | None, **_: Any) -> None:
    namespace = namespace or "default"
    kube.ignore_missing(kube.batch().delete_namespaced_job, name, namespace, propagation_policy="Background")
    kube.delete_pods(namespace, {LABEL_TRAINING: name, **MANAGED})
    kube.ignore_missing(kube.core().delete_namespaced_service, training.service_name(name), namespace)
    kube.ignore_missing(kube.core().delete_namespaced_config_map, training.config_map_name(name), namespace)
