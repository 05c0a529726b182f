"""A real Kubernetes control plane for integration tests: etcd, kube-apiserver (TLS, token
authentication, RBAC), kube-controller-manager, kube-scheduler and kwok, which plays the
kubelet of simulated nodes (it binds nothing itself: the scheduler does) and drives their pods
through its stages. Binaries come from ``scripts/install-kubernetes.sh``.

Two node pools are made: ``cpu`` and ``gpu`` (the latter with ``nvidia.com/gpu`` capacity), each
labelled ``skillgym.dev/pool``. Every process runs on 127.0.0.1 on free ports and is stopped by
its own PID. No pytest dependency."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.services import (
    SERVICES_DIR,
    ServiceStartError,
    _free_ports,
    _Service,
    _service_dir,
    _spawn,
    await_deferred_install,
)

KUBE_DIR = SERVICES_DIR / "kubernetes"
KUBE_BIN = KUBE_DIR / "bin"
KWOK_STAGES = KUBE_DIR / "stages"
TEST_STAGES = Path(__file__).parent / "kwok"
INSTALL_HINT = "run scripts/install-kubernetes.sh first"
POOL_LABEL = "skillgym.dev/pool"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
# Users of the token file: (name, groups). The admin is the tests' own identity.
_USERS = {
    "admin": "system:masters",
    "system:kube-controller-manager": "system:masters",
    "system:kube-scheduler": "",
    "kwok": "system:masters",
}


def kube_binaries_installed() -> bool:
    return all((KUBE_BIN / name).is_file() for name in BINARIES)


class _Process(_Service):
    def __init__(self, name: str, workdir: Path, argv: Sequence[str], port: int = 0) -> None:
        self.name = name
        self.argv = list(argv)
        process, log_path = _spawn(name, workdir, self.argv)
        super().__init__(workdir, process, log_path, port)

    def restart(self) -> None:
        if self.running():  # a frozen process would hold SIGTERM until the kill
            os.kill(self.pid, signal.SIGCONT)
        self.stop()
        process, self.log_path = _spawn(self.name, self.workdir, self.argv)
        self.process = process
        from tests.support.services import _RUNNING

        _RUNNING.add(self)


@dataclass
class KubeCluster:
    workdir: Path
    url: str
    ca_file: Path
    tokens: dict[str, str]
    processes: dict[str, _Process] = field(default_factory=dict)

    # ------------------------------------------------------------------ clients

    def kubeconfig(self, *, user: str = "admin", token: str | None = None, namespace: str = "default",
                   path: Path | None = None) -> Path:
        """A kubeconfig for ``user`` (one of the token file's users) or for a bearer ``token``."""
        target = path or self.workdir / f"kubeconfig-{user if token is None else secrets.token_hex(4)}.json"
        config = {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "test", "cluster": {"server": self.url, "certificate-authority": str(self.ca_file)}}],
            "users": [{"name": "user", "user": {"token": token or self.tokens[user]}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "user", "namespace": namespace}}],
            "current-context": "test",
        }  # fmt: skip
        target.write_text(json.dumps(config))
        return target

    def api_client(self, *, user: str = "admin", token: str | None = None) -> Any:
        import kubernetes

        configuration = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(config_file=str(self.kubeconfig(user=user, token=token)),
                                           client_configuration=configuration)
        return kubernetes.client.ApiClient(configuration)

    def service_account_token(self, namespace: str, name: str, seconds: int = 3600) -> str:
        """A token the API server issues for ``namespace/name`` (TokenRequest), as a pod would get."""
        import kubernetes

        with self.api_client() as client:
            request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                       "spec": {"expirationSeconds": seconds}}
            response = kubernetes.client.CoreV1Api(client).create_namespaced_service_account_token(name, namespace, request)
        return str(response.status.token)

    # ------------------------------------------------------------------ lifecycle

    @property
    def audit_log(self) -> Path:
        return self.workdir / "audit.log"

    def restart_apiserver(self, down_s: float = 0.0, timeout: float = 60.0) -> None:
        apiserver = self.processes["kube-apiserver"]
        apiserver.stop()
        time.sleep(down_s)
        apiserver.restart()
        _wait(apiserver, lambda: self._healthy(), timeout)
        self.wait_until_scheduling(timeout=max(timeout, 180.0))

    def wait_until_scheduling(self, timeout: float = 180.0, stall_s: float = 45.0) -> float:
        """Seconds until a pod for a node made just now is bound by the scheduler and run by kwok.

        The API server's ``/readyz`` answers the admin (who bypasses RBAC) before its authorizer
        has loaded the roles; a restarted server refuses the scheduler's watches meanwhile, and the
        scheduler's reflectors back off, blind to new pods and nodes. The next test would find its
        pods Pending for no reason of its own. A fresh node and a pod bound to it show that both
        watches deliver again. The probe pod tolerates the not-ready taint so that only the
        scheduler and kwok are on the path. A component that leaves its stage stalled for
        ``stall_s`` is restarted once, as a liveness probe would restart it; the error names the
        stage that never came."""
        import kubernetes

        began = time.monotonic()
        deadline = began + timeout
        name = f"probe-{secrets.token_hex(4)}"
        tolerations = [{"key": key, "operator": "Exists"}
                       for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]
        pod = {"metadata": {"name": name},
               "spec": {"automountServiceAccountToken": False, "nodeSelector": {"kubernetes.io/hostname": name},
                        "tolerations": tolerations, "containers": [{"name": "probe", "image": "probe"}]}}  # fmt: skip
        scheduler = self.processes["kube-scheduler"]
        with self.api_client() as client:
            core = kubernetes.client.CoreV1Api(client)
            try:
                _wait(scheduler, lambda: _created(lambda: core.create_node(_node(name, "probe", 0))), timeout)
                _wait(scheduler, lambda: _created(lambda: core.create_namespaced_pod("default", pod)), timeout)

                def stage() -> str:
                    status = core.read_namespaced_pod(name, "default")
                    if status.status.phase == "Running":
                        return "running"
                    return "bound" if status.spec.node_name else "pending"

                self._await_stages(stage, deadline, stall_s)
            finally:
                with suppress(Exception):
                    core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
                with suppress(Exception):
                    core.delete_node(name)
        return time.monotonic() - began

    def _await_stages(self, stage: Callable[[], str], deadline: float, stall_s: float) -> None:
        """Wait for ``stage()`` to say ``running``; the process owning a stalled stage is restarted once."""
        owner = {"pending": "kube-scheduler", "bound": "kwok"}
        restarted: set[str] = set()
        current, since, last_error = "pending", time.monotonic(), ""
        while time.monotonic() < deadline:
            try:
                now_at = stage()
            except Exception as exc:  # the server is still settling
                now_at, last_error = current, f"{type(exc).__name__}: {exc}"
            if now_at == "running":
                return
            if now_at != current:
                current, since = now_at, time.monotonic()
            process = self.processes[owner[current]]
            if not process.running():
                raise ServiceStartError(process.name, f"exited with code {process.process.returncode}", process.log_path)
            if time.monotonic() - since > stall_s and process.name not in restarted:
                restarted.add(process.name)
                process.restart()
                since = time.monotonic()
            time.sleep(0.3)
        process = self.processes[owner[current]]
        raise ServiceStartError(process.name, f"probe pod still {current} (restarted: {sorted(restarted) or 'none'}; "
                                f"{last_error or 'no error'})", process.log_path)

    def stop(self) -> None:
        for name in reversed(list(self.processes)):
            with suppress(Exception):
                self.processes[name].stop(timeout=10)

    def _healthy(self) -> bool:
        import ssl
        import urllib.request

        context = ssl.create_default_context(cafile=str(self.ca_file))
        request = urllib.request.Request(f"{self.url}/readyz", headers={"Authorization": f"Bearer {self.tokens['admin']}"})
        with urllib.request.urlopen(request, context=context, timeout=3) as response:
            return bool(response.status == 200)


def _created(create: Callable[[], Any]) -> bool:
    """Create an object; one that exists already counts (an earlier try got through unanswered)."""
    import kubernetes

    try:
        create()
    except kubernetes.client.ApiException as exc:
        if exc.status != 409:
            raise
    return True


def _wait(process: _Process, check: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = "not ready"
    while time.monotonic() < deadline:
        if not process.running():
            raise ServiceStartError(process.name, f"exited with code {process.process.returncode}", process.log_path)
        try:
            if check():
                return
        except Exception as exc:  # not ready yet
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(0.2)
    raise ServiceStartError(process.name, f"not ready after {timeout:.0f}s ({last})", process.log_path)


def _openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ServiceStartError("pki", f"openssl {args[0]} failed: {done.stderr.strip()[-500:]}")


def _make_pki(pki: Path) -> None:
    """A CA, the API server's serving certificate for 127.0.0.1 and the service-account key pair."""
    pki.mkdir()
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
             "-days", "2", "-subj", "/CN=skillgym-test-ca", cwd=pki)
    (pki / "serving.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc\n"
        "extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "serving.key", "-out", "serving.csr",
             "-subj", "/CN=kube-apiserver", cwd=pki)
    _openssl("x509", "-req", "-in", "serving.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "serving.crt", "-days", "2", "-extfile", "serving.ext", cwd=pki)
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def _node(name: str, pool: str, gpus: int) -> dict[str, Any]:
    capacity = {"cpu": "32", "memory": "256Gi", "pods": "500", "ephemeral-storage": "1Ti"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "annotations": {KWOK_ANNOTATION: "fake"},
                     "labels": {"type": "kwok", POOL_LABEL: pool, "kubernetes.io/hostname": name,
                                "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
        # GPU nodes are tainted as GPU node pools usually are: only pods that tolerate it land there.
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]} if gpus else {},
        "status": {"capacity": capacity, "allocatable": capacity},
    }  # fmt: skip


_AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
"""


def start_kube_cluster(workdir: Path, *, cpu_nodes: int = 2, gpu_nodes: int = 2, gpus_per_node: int = 8,
                       audit: bool = False, timeout: float = 90.0) -> KubeCluster:
    """Start the control plane and kwok with the two node pools; returns once nodes are Ready.
    With ``audit`` every request is logged (who, verb, resource) to ``cluster.audit_log``."""
    await_deferred_install("kubernetes")
    missing = [name for name in BINARIES if not (KUBE_BIN / name).is_file()]
    if missing:
        raise ServiceStartError("kubernetes", f"{', '.join(missing)} not in {KUBE_BIN}; {INSTALL_HINT}")
    home = _service_dir(workdir, "kube")
    pki = home / "pki"
    _make_pki(pki)
    tokens = {user: secrets.token_hex(16) for user in _USERS}
    (home / "tokens.csv").write_text("".join(
        f"{tokens[user]},{user},{user},\"{groups}\"\n" if groups else f"{tokens[user]},{user},{user}\n"
        for user, groups in _USERS.items()))
    etcd_port, peer_port, api_port = _free_ports(3)
    url = f"https://127.0.0.1:{api_port}"
    cluster = KubeCluster(home, url, pki / "ca.crt", tokens)
    try:
        etcd = _Process("etcd", home, [
            str(KUBE_BIN / "etcd"), "--name", "test", "--data-dir", str(home / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-cluster", f"test=http://127.0.0.1:{peer_port}",
            "--unsafe-no-fsync", "--log-level", "warn", "--quota-backend-bytes", str(2 * 1024**3),
        ], etcd_port)  # fmt: skip
        cluster.processes["etcd"] = etcd
        apiserver = _Process("kube-apiserver", home, [
            str(KUBE_BIN / "kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={api_port}",
            f"--tls-cert-file={pki / 'serving.crt'}", f"--tls-private-key-file={pki / 'serving.key'}",
            f"--client-ca-file={pki / 'ca.crt'}", f"--token-auth-file={home / 'tokens.csv'}",
            "--authorization-mode=RBAC", "--anonymous-auth=false",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={pki / 'sa.pub'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-cluster-ip-range=10.0.0.0/24", "--endpoint-reconciler-type=none",
            "--enable-priority-and-fairness=false", "--max-requests-inflight=2000",
            "--max-mutating-requests-inflight=1000", "--watch-cache=true", "--v=0",
            *_audit_flags(home, audit),
        ], api_port)  # fmt: skip
        cluster.processes["kube-apiserver"] = apiserver
        _wait(apiserver, cluster._healthy, timeout)
        cm_config = cluster.kubeconfig(user="system:kube-controller-manager", path=home / "controller-manager.json")
        cluster.processes["kube-controller-manager"] = _Process("kube-controller-manager", home, [
            str(KUBE_BIN / "kube-controller-manager"), f"--kubeconfig={cm_config}", "--leader-elect=false",
            "--secure-port=0", "--use-service-account-credentials=false", f"--root-ca-file={pki / 'ca.crt'}",
            f"--service-account-private-key-file={pki / 'sa.key'}", "--controllers=*",
            "--concurrent-job-syncs=20", "--kube-api-qps=500", "--kube-api-burst=1000", "--v=0",
        ])  # fmt: skip
        scheduler_config = cluster.kubeconfig(user="system:kube-scheduler", path=home / "scheduler.json")
        cluster.processes["kube-scheduler"] = _Process("kube-scheduler", home, [
            str(KUBE_BIN / "kube-scheduler"), f"--kubeconfig={scheduler_config}", "--leader-elect=false",
            "--secure-port=0", "--kube-api-qps=500", "--kube-api-burst=1000", "--v=0",
        ])  # fmt: skip
        kwok_config = cluster.kubeconfig(user="kwok", path=home / "kwok.json")
        stages = sorted(KWOK_STAGES.glob("*.yaml")) + sorted(TEST_STAGES.glob("*.yaml"))
        cluster.processes["kwok"] = _Process("kwok", home, [
            str(KUBE_BIN / "kwok"), f"--kubeconfig={kwok_config}", "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
            "--node-ip=10.1.0.1", "--cidr=10.2.0.0/16", "--node-lease-duration-seconds=40",
            *(f"--config={stage}" for stage in stages),
        ])  # fmt: skip
        _add_nodes(cluster, cpu_nodes, gpu_nodes, gpus_per_node, timeout)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _audit_flags(home: Path, audit: bool) -> list[str]:
    if not audit:
        return []
    (home / "audit-policy.yaml").write_text(_AUDIT_POLICY)
    return [f"--audit-policy-file={home / 'audit-policy.yaml'}", f"--audit-log-path={home / 'audit.log'}",
            "--audit-log-format=json", "--audit-log-mode=batch", "--audit-log-maxsize=0"]


def _add_nodes(cluster: KubeCluster, cpu_nodes: int, gpu_nodes: int, gpus: int, timeout: float) -> None:
    import kubernetes

    names = [f"kwok-cpu-{i}" for i in range(cpu_nodes)] + [f"kwok-gpu-{i}" for i in range(gpu_nodes)]
    with cluster.api_client() as client:
        core = kubernetes.client.CoreV1Api(client)
        for name in names:
            pool = "gpu" if name.startswith("kwok-gpu") else "cpu"
            core.create_node(_node(name, pool, gpus if pool == "gpu" else 0))

        def ready() -> bool:
            nodes = {n.metadata.name: n for n in core.list_node().items}
            return all(any(c.type == "Ready" and c.status == "True" for c in (nodes[n].status.conditions or []))
                       for n in names if n in nodes) and set(names) <= set(nodes)

        def default_account() -> bool:
            core.read_namespaced_service_account("default", "default")
            return True

        _wait(cluster.processes["kwok"], ready, timeout)
        _wait(cluster.processes["kube-controller-manager"], default_account, timeout)


@contextmanager
def kube_cluster(workdir: Path, **options: Any) -> Iterator[KubeCluster]:
    cluster = start_kube_cluster(workdir, **options)
    try:
        yield cluster
    finally:
        cluster.stop()
