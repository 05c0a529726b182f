"""kopf handlers: thin glue between watch events and the operator's logic. SandboxRuns are
followed through raw watch events (see :mod:`skillgym_operator.runs`); TrainingJobs, few and
long, through kopf's create and delete handlers."""

from __future__ import annotations

import logging
import os
import signal
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
from skillgym_operator.diffbase import ChangeHandledKindsOnly
from skillgym_operator.reconcile import now_iso
from skillgym_operator.resources import (
    GROUP,
    LABEL_RUN,
    LABEL_TRAINING,
    MANAGED_BY,
    SANDBOX_RUNS,
    TERMINAL_PHASES,
    TRAINING_JOBS,
    VERSION,
)
from skillgym_operator.runs.housekeeper import Housekeeper
from skillgym_operator.runs.reconciler import Reconciler
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import InvalidSpecError, parse_training_job
from skillgym_operator.status import checkpoint_keys, training_phase, training_progress

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
    settings.persistence.diffbase_storage = ChangeHandledKindsOnly({"SandboxRun", "Pod", "NetworkPolicy"})
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


@kopf.on.startup(id="sandbox-runs")
def start_sandbox_runs(memo: kopf.Memo, **_: Any) -> None:
    """After leader election: this replica's view of the runs, and the thread for their chores."""
    runs = Reconciler(SETTINGS)
    housekeeper = Housekeeper(runs.housekeep, SETTINGS.housekeeping_interval_s)
    runs.wake = housekeeper.wake
    memo.sandbox_runs, memo.housekeeper = runs, housekeeper.start()


@kopf.on.cleanup(id="stop-sandbox-runs")
def stop_sandbox_runs(memo: kopf.Memo, **_: Any) -> None:
    housekeeper = getattr(memo, "housekeeper", None)
    if housekeeper is not None:
        housekeeper.stop()


def _run_event_is_news(body: kopf.Body, memo: kopf.Memo, **kwargs: Any) -> bool:
    return bool(memo.sandbox_runs.run_event_is_news(kwargs.get("type"), body))


def _pod_event_is_news(body: kopf.Body, memo: kopf.Memo, **kwargs: Any) -> bool:
    return bool(memo.sandbox_runs.pod_event_is_news(kwargs.get("type"), body))


@kopf.on.event(GROUP, VERSION, SANDBOX_RUNS, id="sandbox-run-event", when=_run_event_is_news)
def sandbox_run_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.sandbox_runs.on_run_event(event.get("type"), dict(event["object"]))


@kopf.on.event("pods", labels={LABEL_RUN: kopf.PRESENT, **MANAGED}, id="sandbox-pod-event", when=_pod_event_is_news)
def sandbox_pod_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.sandbox_runs.on_pod_event(event.get("type"), dict(event["object"]))


@kopf.on.event("networking.k8s.io", "v1", "networkpolicies", labels=MANAGED, id="sandbox-policy-event")
def sandbox_policy_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.sandbox_runs.policy.on_event(event.get("type"), dict(event["object"]))


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
