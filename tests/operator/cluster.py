"""The operator as it runs in a cluster, on the real test control plane: the chart's CRDs
installed, the chart's operator ServiceAccount, Role and RoleBinding applied in a namespace, and
``kopf run`` started as a process of its own with that ServiceAccount's token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes
import yaml

from tests.support.kube_cluster import KubeCluster
from tests.support.services import free_port
from tests.support.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "skillgym"
GROUP, VERSION = "skillgym.io", "v1alpha1"
RELEASE = "sg"


def install_crds(kube: KubeCluster) -> None:
    """The chart's CRDs, created once and Established."""
    with kube.api_client() as client:
        extensions = kubernetes.client.ApiextensionsV1Api(client)
        names = []
        for path in sorted((CHART / "crds").glob("*.yaml")):
            crd = yaml.safe_load(path.read_text())
            names.append(crd["metadata"]["name"])
            try:
                extensions.create_custom_resource_definition(crd)
            except kubernetes.client.ApiException as exc:
                if exc.status != 409:
                    raise

        def established() -> bool:
            for name in names:
                conditions = extensions.read_custom_resource_definition(name).status.conditions or []
                if not any(c.type == "Established" and c.status == "True" for c in conditions):
                    return False
            return True

        wait_for(established, 30, what="CRDs established")


def operator_rbac(namespace: str, values: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The chart's ServiceAccount, Role and RoleBinding of the operator, rendered for ``namespace``."""
    with helm.Chart.load(str(CHART)) as chart:
        manifests = chart.render(dict(values or {}), name=RELEASE, namespace=namespace, is_install=True)
    docs = [doc for path, text in manifests.items() if not path.endswith(".txt")
            for doc in yaml.safe_load_all(text) if doc]
    wanted = {"ServiceAccount", "Role", "RoleBinding"}
    return [d for d in docs if d["kind"] in wanted
            and d["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "operator"]


def apply_operator_rbac(kube: KubeCluster, namespace: str) -> str:
    """Apply the operator's RBAC; returns its ServiceAccount name."""
    docs = operator_rbac(namespace)
    with kube.api_client() as client:
        core, rbac = kubernetes.client.CoreV1Api(client), kubernetes.client.RbacAuthorizationV1Api(client)
        for doc in docs:
            {"ServiceAccount": core.create_namespaced_service_account,
             "Role": rbac.create_namespaced_role,
             "RoleBinding": rbac.create_namespaced_role_binding}[doc["kind"]](namespace, doc)  # fmt: skip
    return str(next(d for d in docs if d["kind"] == "ServiceAccount")["metadata"]["name"])


# Short waits so tests see retries, clean-ups and progress in seconds (the defaults are minutes).
QUICK_TIMINGS = {
    "SKILLGYM_OPERATOR_FINISHED_POD_TTL_S": "0",
    "SKILLGYM_OPERATOR_RETRY_BACKOFF_S": "0.2",
    "SKILLGYM_OPERATOR_HOUSEKEEPING_INTERVAL_S": "0.5",
    "SKILLGYM_OPERATOR_TRAINING_PROGRESS_INTERVAL_S": "0.5",
    "SKILLGYM_OPERATOR_PUSH_GRACE_S": "5",
}


class OperatorProcess:
    """``kopf run -m skillgym_operator`` for one namespace, as the operator's ServiceAccount."""

    def __init__(self, kube: KubeCluster, namespace: str, service_account: str, workdir: Path,
                 settings: Mapping[str, str] | None = None, name: str = "operator", verbose: bool = True,
                 quick: bool = True) -> None:
        self.kube, self.namespace, self.workdir, self.name = kube, namespace, workdir, name
        self.verbose = verbose
        self.health_port = free_port()
        token = kube.service_account_token(namespace, service_account)
        self.kubeconfig = kube.kubeconfig(token=token, namespace=namespace, path=workdir / f"{name}-kubeconfig.json")
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SKILLGYM_", "KUBERNETES_"))},
            "KUBECONFIG": str(self.kubeconfig),
            "SKILLGYM_OPERATOR_SCANNING_DISABLED": "true",
            **(QUICK_TIMINGS if quick else {}),
            "SKILLGYM_STORE": "local",
            "SKILLGYM_STORE_ROOT": str(workdir / "store"),
            **(settings or {}),
        }
        self.log_path = workdir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.errors_expected = False

    def start(self) -> OperatorProcess:
        argv = [sys.executable, "-m", "kopf", "run", "-m", "skillgym_operator", f"--namespace={self.namespace}",
                "--standalone", f"--liveness=http://127.0.0.1:{self.health_port}/healthz",
                *(["--verbose"] if self.verbose else [])]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(argv, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_watching(self, timeout: float = 60.0) -> None:
        """Until every watch stream is open (read from the debug log), or, quiet, until the
        liveness endpoint answers (the operator serves it once started) and a moment more."""
        if self.verbose:
            wait_for(lambda: self.log().count("Starting the watch-stream") >= 4 or self._died(), timeout,
                     what=f"{self.name} watching")
        else:
            wait_for(lambda: self._healthy() or self._died(), timeout, what=f"{self.name} healthy")
            time.sleep(1.0)
        assert not self._died(), self.log()[-3000:]

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/healthz", timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def _died(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def kill(self) -> None:
        """SIGKILL: no cleanup, no lease release, like a node that vanished."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


def sandbox_run(name: str, env: Mapping[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body = {
        "command": ["bash", "/tests/test.sh"],
        "role": "verifier",
        "image": "python:3.11-slim",
        "outputPrefix": f"sandbox/runs/{name}",
        "mounts": [{"target": "/app", "key": "sandbox/inputs/a.tar.gz", "writable": True,
                    "resultKey": f"sandbox/runs/{name}/app.tar.gz"}],
        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
        "limits": {"cpu": "500m", "memoryMb": 512, "wallSeconds": 30},
        **spec,
    }  # fmt: skip
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "SandboxRun", "metadata": {"name": name}, "spec": body}


def training_job(name: str, **spec: Any) -> dict[str, Any]:
    body = {"datasetKey": "datasets/d1/train.jsonl", "baseModel": "HuggingFaceTB/SmolLM2-135M-Instruct",
            "trainerConfig": {"epochs": 1}, "gpus": 4, "nodes": 2, **spec}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainingJob", "metadata": {"name": name}, "spec": body}


class Cluster:
    """Reads and writes in one namespace as the admin (the tests' own view of the API server)."""

    def __init__(self, kube: KubeCluster, namespace: str) -> None:
        self.client = kube.api_client()
        self.namespace = namespace
        self.core = kubernetes.client.CoreV1Api(self.client)
        self.batch = kubernetes.client.BatchV1Api(self.client)
        self.custom = kubernetes.client.CustomObjectsApi(self.client)

    def create(self, plural: str, body: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object(GROUP, VERSION, self.namespace, plural, body)

    def delete(self, plural: str, name: str) -> None:
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, self.namespace, plural, name)

    def get(self, plural: str, name: str) -> dict[str, Any] | None:
        try:
            return dict(self.custom.get_namespaced_custom_object(GROUP, VERSION, self.namespace, plural, name))
        except kubernetes.client.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def status(self, plural: str, name: str) -> dict[str, Any]:
        return (self.get(plural, name) or {}).get("status") or {}

    def wait_phase(self, plural: str, name: str, phases: tuple[str, ...], timeout: float = 45.0) -> dict[str, Any]:
        return dict(wait_for(lambda: (s := self.status(plural, name)).get("phase") in phases and s, timeout,
                             what=f"{name} in {phases}", every_s=0.2))

    def pods(self, **labels: str) -> dict[str, Any]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items())
        return {p.metadata.name: p for p in self.core.list_namespaced_pod(self.namespace, label_selector=selector).items}

    def close(self) -> None:
        self.client.close()


def wait_gone(check: Any, timeout: float = 30.0, what: str = "deletion") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
