"""The test control plane itself: kwok nodes of both pools are Ready, the scheduler binds pods to
them, kwok's stages end pods as the run container's environment asks, a Job's pods complete
under the real Job controller, and RBAC refuses an identity without rights."""

from __future__ import annotations

import os
import signal
from typing import Any

import kubernetes
import pytest

from tests.support.kube_cluster import POOL_LABEL, KubeCluster
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.deferred_service]


def _pod(name: str, env: dict[str, str], pool: str = "cpu") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {POOL_LABEL: pool},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "run", "image": "busybox", "env": [{"name": k, "value": v} for k, v in env.items()]},
                           {"name": "push", "image": "busybox"}],
        },
    }


def _phase(core: Any, namespace: str, name: str) -> Any:
    return core.read_namespaced_pod(name, namespace).status


def test_nodes_of_both_pools_are_ready(kube: KubeCluster) -> None:
    with kube.api_client() as client:
        nodes = kubernetes.client.CoreV1Api(client).list_node().items
    pools = {n.metadata.labels[POOL_LABEL] for n in nodes}
    assert pools == {"cpu", "gpu"}
    gpu = next(n for n in nodes if n.metadata.labels[POOL_LABEL] == "gpu")
    assert gpu.status.allocatable["nvidia.com/gpu"] == "8"


def test_pods_are_bound_and_end_as_their_environment_asks(kube: KubeCluster, kube_namespace: str) -> None:
    with kube.api_client() as client:
        core = kubernetes.client.CoreV1Api(client)
        core.create_namespaced_pod(kube_namespace, _pod("ok", {}))
        core.create_namespaced_pod(kube_namespace, _pod("fails", {"SIMULATED_EXIT_CODE": "3"}))
        core.create_namespaced_pod(kube_namespace, _pod("evicted", {"SIMULATED_OUTCOME": "evict"}, pool="gpu"))
        core.create_namespaced_pod(kube_namespace, _pod("late", {"SIMULATED_OUTCOME": "hang"}))
        ok = wait_for(lambda: (s := _phase(core, kube_namespace, "ok")).phase == "Succeeded" and s, 30, what="ok")
        assert ok.container_statuses[0].state.terminated.exit_code == 0
        failed = wait_for(lambda: (s := _phase(core, kube_namespace, "fails")).phase == "Failed" and s, 30, what="fails")
        codes = {c.name: c.state.terminated.exit_code for c in failed.container_statuses}
        assert codes == {"run": 3, "push": 0}
        evicted = wait_for(lambda: (s := _phase(core, kube_namespace, "evicted")).phase == "Failed" and s, 30)
        assert evicted.reason == "Evicted"
        assert core.read_namespaced_pod("evicted", kube_namespace).spec.node_name.startswith("kwok-gpu-")
        late = wait_for(lambda: (s := _phase(core, kube_namespace, "late")).phase == "Failed" and s, 30)
        assert late.reason == "DeadlineExceeded"


def test_an_indexed_job_completes_under_the_job_controller(kube: KubeCluster, kube_namespace: str) -> None:
    job = {
        "metadata": {"name": "indexed"},
        "spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2,
                 "template": _pod("", {}, pool="gpu") | {"metadata": {}}},
    }  # fmt: skip
    job["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "4"}}
    with kube.api_client() as client:
        batch = kubernetes.client.BatchV1Api(client)
        batch.create_namespaced_job(kube_namespace, job)
        def complete() -> Any:
            job = batch.read_namespaced_job("indexed", kube_namespace)
            conditions = job.status.conditions or []
            return any(c.type == "Complete" and c.status == "True" for c in conditions) and job

        done = wait_for(complete, 60, what="job completion")
        assert done.status.succeeded == 2


def test_rbac_refuses_an_identity_without_rights(kube: KubeCluster, kube_namespace: str) -> None:
    with kube.api_client() as client:
        core = kubernetes.client.CoreV1Api(client)
        core.create_namespaced_service_account(kube_namespace, {"metadata": {"name": "nobody"}})
    token = kube.service_account_token(kube_namespace, "nobody")
    with kube.api_client(token=token) as client, pytest.raises(kubernetes.client.ApiException) as refused:
        kubernetes.client.CoreV1Api(client).list_namespaced_pod(kube_namespace)
    assert refused.value.status == 403


def test_the_scheduling_probe_restarts_a_scheduler_that_stopped_answering(kube: KubeCluster) -> None:
    scheduler = kube.processes["kube-scheduler"]
    frozen = scheduler.pid
    os.kill(frozen, signal.SIGSTOP)
    try:
        kube.wait_until_scheduling(timeout=90, stall_s=5)
    finally:
        if scheduler.pid == frozen:
            os.kill(frozen, signal.SIGCONT)
    assert scheduler.pid != frozen and scheduler.running()
    assert kube.wait_until_scheduling(timeout=60) < 60
