"""A node of the real test control plane whose pods really run: the stand-in kubelet of
``tests/operator/node.py`` (fetch from the store, the command in the local bubblewrap sandbox,
push to the store) serving the pods the scheduler binds to it. kwok leaves this node alone (it
lacks kwok's annotation); a heartbeat keeps its Lease and Ready condition fresh, so the node
lifecycle controller treats it as a live node."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kubernetes
import urllib3
from skillgym_core.store.base import Store

from tests.operator.node import SandboxNode
from tests.support.kube_cluster import POOL_LABEL, KubeCluster
from tests.support.waiting import wait_for

SANDBOX_POOL = "sandbox"
SANDBOX_TAINT = {"key": "skillgym.io/sandbox", "value": "true", "effect": "NoSchedule"}
SANDBOX_TOLERATION = {"key": "skillgym.io/sandbox", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


class NodePods:
    """What the stand-in kubelet reads: the pods bound to one node, as plain dicts."""

    def __init__(self, kube: KubeCluster, node: str) -> None:
        self.api_client = kube.api_client()
        self.node = node

    def objects(self, resource: str, namespace: str) -> dict[str, dict[str, Any]]:
        assert resource == "v1/pods", resource
        try:
            pods = kubernetes.client.CoreV1Api(self.api_client).list_namespaced_pod(
                namespace, field_selector=f"spec.nodeName={self.node}")
        except (kubernetes.client.ApiException, urllib3.exceptions.HTTPError):
            return {}  # the API server is away for a moment: like a kubelet, look again later
        return {p.metadata.name: self.api_client.sanitize_for_serialization(p) for p in pods.items}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ready(now: str) -> dict[str, Any]:
    return {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "stand-in kubelet",
            "lastHeartbeatTime": now, "lastTransitionTime": now}


class _Heartbeat(threading.Thread):
    def __init__(self, core: Any, coordination: Any, name: str) -> None:
        super().__init__(name=f"heartbeat-{name}", daemon=True)
        self.core, self.coordination, self.node = core, coordination, name
        self.stop = threading.Event()

    def beat(self) -> None:
        now = _now()
        self.core.patch_node_status(self.node, {"status": {"conditions": [_ready(now)]}})
        lease = {"metadata": {"name": self.node, "namespace": "kube-node-lease"},
                 "spec": {"holderIdentity": self.node, "leaseDurationSeconds": 40,
                          "renewTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}  # fmt: skip
        try:
            # A merge patch: the Lease may be left from an earlier node of this name, and a replace
            # without its resourceVersion is refused (422), which would let it go stale.
            self.coordination.patch_namespaced_lease(self.node, "kube-node-lease", lease)
        except kubernetes.client.ApiException as exc:
            if exc.status != 404:
                raise
            self.coordination.create_namespaced_lease("kube-node-lease", lease)

    def run(self) -> None:
        while not self.stop.wait(5):
            with suppress(Exception):  # a missed beat is retried; the grace period is 40 s
                self.beat()


@contextmanager
def executing_node(kube: KubeCluster, namespace: str, store: Store, workdir: Path,
                   name: str = "sandbox-node-0") -> Iterator[SandboxNode]:
    """A tainted node in the ``sandbox`` pool whose pods in ``namespace`` really run."""
    client = kube.api_client()
    core, coordination = kubernetes.client.CoreV1Api(client), kubernetes.client.CoordinationV1Api(client)
    capacity = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    core.create_node({"metadata": {"name": name, "labels": {POOL_LABEL: SANDBOX_POOL, "kubernetes.io/hostname": name}},
                      "spec": {"taints": [SANDBOX_TAINT]}})  # fmt: skip
    heartbeat = _Heartbeat(core, coordination, name)
    try:
        core.patch_node_status(name, {"status": {"capacity": capacity, "allocatable": capacity,
                                                 "conditions": [_ready(_now())]}})  # fmt: skip
        heartbeat.beat()
        heartbeat.start()
        wait_for(lambda: not any(t.key.startswith("node.kubernetes.io/")
                                 for t in core.read_node(name).spec.taints or []), 30, what="node untainted")
        workdir.mkdir(parents=True, exist_ok=True)
        with SandboxNode(NodePods(kube, name), namespace, store, workdir) as node:  # type: ignore[arg-type]
            yield node
    finally:
        heartbeat.stop.set()
        with suppress(kubernetes.client.ApiException):
            core.delete_node(name)
        with suppress(kubernetes.client.ApiException):
            coordination.delete_namespaced_lease(name, "kube-node-lease")
        client.close()
