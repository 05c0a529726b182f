"""KubernetesSandbox on the cluster path for real: SandboxRuns on a real API server, the operator
(``kopf run`` as the chart's ServiceAccount) placing their pods on a dedicated sandbox node pool,
a node there whose kubelet really runs them, and inputs and results handed over through MinIO.
Also: the client's watch outlives an API server restart in the middle of a run."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from skillgym_core.sandbox.base import Limits, Mount, Outcome, SandboxResult
from skillgym_core.sandbox.kubernetes import KubernetesSandbox
from skillgym_core.sandbox.session import open_session
from skillgym_core.store.s3 import S3Store

from tests.operator.cluster import OperatorProcess, apply_operator_rbac, install_crds
from tests.operator.cluster_node import SANDBOX_POOL, SANDBOX_TOLERATION, executing_node
from tests.support.kube_cluster import POOL_LABEL, KubeCluster
from tests.support.services import S3Server

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


@pytest.fixture
def store(s3: S3Server, kube_namespace: str) -> S3Store:
    return S3Store(endpoint=s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, bucket=kube_namespace)


@pytest.fixture
def sandbox(kube: KubeCluster, kube_namespace: str, store: S3Store, tmp_path: Path) -> Iterator[KubernetesSandbox]:
    import json

    install_crds(kube)
    account = apply_operator_rbac(kube, kube_namespace)
    settings = {"SKILLGYM_OPERATOR_SANDBOX_NODE_SELECTOR": json.dumps({POOL_LABEL: SANDBOX_POOL}),
                "SKILLGYM_OPERATOR_SANDBOX_TOLERATIONS": json.dumps([SANDBOX_TOLERATION])}
    operator = OperatorProcess(kube, kube_namespace, account, tmp_path, settings=settings).start()
    client = kube.api_client()
    try:
        operator.wait_watching()
        with executing_node(kube, kube_namespace, store, tmp_path / "node") as node:
            yield KubernetesSandbox(store, namespace=kube_namespace, api_client=client, start_slack_s=60)
            assert not node.errors, node.errors
    finally:
        client.close()
        operator.stop()


def test_a_command_runs_on_the_sandbox_pool_with_its_files_through_minio(
    sandbox: KubernetesSandbox, store: S3Store, tmp_path: Path
) -> None:
    workspace, tests = tmp_path / "ws", tmp_path / "tests"
    workspace.mkdir()
    tests.mkdir()
    (workspace / "input.txt").write_text("hello\n")
    (tests / "check.sh").write_text("tr a-z A-Z < /app/input.txt > /app/output.txt; cat -; echo oops >&2; exit 3\n")
    result = sandbox.run(["sh", "/tests/check.sh"], mounts=[Mount(workspace, "/app", writable=True), Mount(tests, "/tests")],
                         workdir="/app", limits=Limits(wall_s=20), stdin=b"from stdin\n")
    assert (result.outcome, result.exit_code) == (Outcome.OK, 3), result
    assert (result.stdout, result.stderr) == ("from stdin\n", "oops\n")
    assert (workspace / "output.txt").read_text() == "HELLO\n"
    assert any(key.startswith("sandbox/inputs/") for key in store.list())  # uploaded to MinIO, content-addressed
    assert not list(store.list("sandbox/runs/"))  # results fetched and cleaned up


def test_the_wall_timeout_holds_on_the_cluster(sandbox: KubernetesSandbox, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = sandbox.run(["sh", "-c", "echo started; sleep 60; echo never"], mounts=[Mount(workspace, "/app", writable=True)],
                         limits=Limits(wall_s=1))
    assert (result.outcome, result.exit_code, result.stdout) == (Outcome.TIMEOUT, None, "started\n")


def test_a_run_survives_an_api_server_restart(sandbox: KubernetesSandbox, kube: KubeCluster, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = sandbox.run(["sh", "-c", "sleep 6; echo finished > /app/done; echo ok"],
                                        mounts=[Mount(workspace, "/app", writable=True)], limits=Limits(wall_s=60))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    import time

    time.sleep(3)
    kube.restart_apiserver(down_s=2)
    thread.join(120)
    assert "error" not in box, box.get("error")
    result: SandboxResult = box["result"]
    assert (result.outcome, result.exit_code, result.stdout) == (Outcome.OK, 0, "ok\n"), result
    assert (workspace / "done").read_text() == "finished\n"


def test_a_session_keeps_one_pod_warm_on_the_sandbox_pool(
    sandbox: KubernetesSandbox, kube: KubeCluster, kube_namespace: str, store: S3Store, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = open_session(sandbox, mounts=[Mount(workspace, "/app", writable=True)], workdir="/app", env=None,
                           limits=Limits(wall_s=120), idle_s=60)  # fmt: skip
    began = time.monotonic()
    assert session.run("echo 41 > n", timeout_s=20).exit_code == 0
    steps = []
    for _ in range(5):
        result = session.run("echo $(( $(cat n) + 1 )) > n; cat n", timeout_s=10)
        assert result.exit_code == 0, result
        steps.append(result.duration_s)
    assert session.run("cat n", timeout_s=10).stdout == "46\n"
    with kube.api_client() as client:
        pods = kubernetes.client.CoreV1Api(client).list_namespaced_pod(kube_namespace).items
    assert len(pods) == 1 and pods[0].spec.node_name == "sandbox-node-0"  # one warm pod, on the sandbox pool
    session.close()
    assert (workspace / "n").read_text() == "46\n"
    assert not list(store.list("sandbox/runs/"))
    print(f"session: first step {steps[0]:.2f} s after {time.monotonic() - began:.1f} s; "
          f"median step {sorted(steps)[len(steps) // 2]:.3f} s")
