"""The operator end to end on a real API server: ``kopf run`` as the chart's operator
ServiceAccount, SandboxRuns becoming pods that the scheduler binds to kwok nodes and kwok's
stages end (success, command failure, deadline, eviction), TrainingJobs becoming indexed Jobs on
the GPU pool that the Job controller completes, restarts mid-run, two replicas under leader
election, and watches that survive an API server restart. Everything is checked from the API
server's view."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from tests.operator.cluster import (
    Cluster,
    OperatorProcess,
    apply_operator_rbac,
    install_crds,
    sandbox_run,
    training_job,
    wait_gone,
)
from tests.support.kube_cluster import POOL_LABEL, KubeCluster
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]

RUN_LABEL = "skillgym.io/sandbox-run"
OPERATOR_LEASE = "sg-skillgym-operator"


@pytest.fixture
def cluster(kube: KubeCluster, kube_namespace: str) -> Iterator[Cluster]:
    install_crds(kube)
    view = Cluster(kube, kube_namespace)
    yield view
    view.close()


@pytest.fixture
def service_account(kube: KubeCluster, kube_namespace: str, cluster: Cluster) -> str:
    return apply_operator_rbac(kube, kube_namespace)


@pytest.fixture
def operator(kube: KubeCluster, kube_namespace: str, service_account: str, tmp_path: Path) -> Iterator[OperatorProcess]:
    process = OperatorProcess(kube, kube_namespace, service_account, tmp_path).start()
    try:
        process.wait_watching()
        yield process
    finally:
        process.stop()
    if not process.errors_expected:
        assert "Traceback" not in process.log(), process.log()[-4000:]


def _or_none(read: Any, name: str, namespace: str) -> Any:
    """The object, or None while it does not exist."""
    try:
        return read(name, namespace)
    except kubernetes.client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _node_of(cluster: Cluster, pod: str) -> Any:
    return cluster.core.read_namespaced_pod(pod, cluster.namespace).spec.node_name


def test_a_sandbox_run_runs_on_a_kwok_node_and_succeeds(cluster: Cluster, operator: OperatorProcess) -> None:
    cluster.create("sandboxruns", sandbox_run("run-ok"))
    pod = wait_for(lambda: cluster.pods(**{RUN_LABEL: "run-ok"}).get("run-ok-a1"), 30, what="pod")
    bound = wait_for(lambda: _node_of(cluster, pod.metadata.name), 30, what="binding")
    assert bound.startswith("kwok-cpu-")
    status = cluster.wait_phase("sandboxruns", "run-ok", ("Succeeded", "Failed"))
    assert (status["phase"], status["outcome"], status["exitCode"]) == ("Succeeded", "ok", 0)
    assert status["artifacts"]["mounts"] == {"/app": "sandbox/runs/run-ok/app.tar.gz"}
    assert status.get("startedAt") and status.get("finishedAt")
    wait_gone(lambda: cluster.pods(**{RUN_LABEL: "run-ok"}), what="finished pod cleanup")
    run = cluster.get("sandboxruns", "run-ok")
    assert not run["metadata"].get("finalizers") and not run["metadata"].get("annotations")  # no bookkeeping
    networking = kubernetes.client.NetworkingV1Api(cluster.client)
    policy = networking.read_namespaced_network_policy("skillgym-sandbox", cluster.namespace)
    assert policy.spec.policy_types == ["Ingress", "Egress"] and not policy.spec.ingress

    cluster.delete("sandboxruns", "run-ok")
    wait_gone(lambda: cluster.get("sandboxruns", "run-ok"), what="run deletion")
    assert networking.read_namespaced_network_policy("skillgym-sandbox", cluster.namespace)  # the namespace's


def test_deleting_a_running_run_removes_its_pod(cluster: Cluster, operator: OperatorProcess) -> None:
    cluster.create("sandboxruns", sandbox_run("run-gone", {"SIMULATED_OUTCOME": "hang"}))
    wait_for(lambda: cluster.pods(**{RUN_LABEL: "run-gone"}), 30, what="pod")
    cluster.delete("sandboxruns", "run-gone")
    wait_gone(lambda: cluster.get("sandboxruns", "run-gone"), what="run deletion")
    wait_gone(lambda: cluster.pods(**{RUN_LABEL: "run-gone"}), what="its pod")


def test_a_loosened_sandbox_policy_is_restored(cluster: Cluster, operator: OperatorProcess) -> None:
    cluster.create("sandboxruns", sandbox_run("run-net"))
    networking = kubernetes.client.NetworkingV1Api(cluster.client)

    def spec() -> Any:
        policy = _or_none(networking.read_namespaced_network_policy, "skillgym-sandbox", cluster.namespace)
        return policy and policy.spec.to_dict()

    wanted = wait_for(spec, 30, what="policy")
    networking.patch_namespaced_network_policy("skillgym-sandbox", cluster.namespace, {"spec": {"egress": [{}]}})
    wait_for(lambda: spec() == wanted, 30, what="restored")
    networking.delete_namespaced_network_policy("skillgym-sandbox", cluster.namespace)
    wait_for(lambda: spec() == wanted, 30, what="recreated")


def test_failure_deadline_and_eviction_map_to_outcomes_and_retries(cluster: Cluster, operator: OperatorProcess) -> None:
    cluster.create("sandboxruns", sandbox_run("run-fail", {"SIMULATED_EXIT_CODE": "3"}))
    cluster.create("sandboxruns", sandbox_run("run-late", {"SIMULATED_OUTCOME": "hang"}, maxAttempts=1))
    cluster.create("sandboxruns", sandbox_run("run-evicted", {"SIMULATED_OUTCOME": "evict"}, maxAttempts=2))
    failed = cluster.wait_phase("sandboxruns", "run-fail", ("Succeeded", "Failed"))
    assert (failed["phase"], failed["outcome"], failed["exitCode"], failed.get("attempt", 1)) == ("Failed", "ok", 3, 1)
    late = cluster.wait_phase("sandboxruns", "run-late", ("Succeeded", "Failed"))
    assert (late["phase"], late["outcome"], late["reason"]) == ("Failed", "timeout", "DeadlineExceeded")
    evicted = cluster.wait_phase("sandboxruns", "run-evicted", ("Succeeded", "Failed"), timeout=60)
    assert (evicted["phase"], evicted["outcome"], evicted["reason"], evicted["attempt"]) == (
        "Failed", "killed", "Evicted", 2)
    events = cluster.core.list_namespaced_event(cluster.namespace).items
    assert any(e.involved_object.name == "run-evicted" for e in events)


def test_a_run_no_node_can_take_carries_the_schedulers_reason(
    kube: KubeCluster, kube_namespace: str, service_account: str, cluster: Cluster, tmp_path: Path
) -> None:
    settings = {"SKILLGYM_OPERATOR_SANDBOX_NODE_SELECTOR": json.dumps({POOL_LABEL: "no-such-pool"})}
    process = OperatorProcess(kube, kube_namespace, service_account, tmp_path, settings=settings).start()
    try:
        process.wait_watching()
        cluster.create("sandboxruns", sandbox_run("run-nowhere"))
        status = wait_for(lambda: (s := cluster.status("sandboxruns", "run-nowhere")).get("reason") and s, 60,
                          what="the scheduler's reason")  # fmt: skip
    finally:
        process.stop()
    assert (status["phase"], status["reason"]) == ("Pending", "Unschedulable")
    assert status["message"].startswith("0/") and "node affinity/selector" in status["message"], status


def test_a_training_job_becomes_an_indexed_job_on_the_gpu_pool(cluster: Cluster, operator: OperatorProcess) -> None:
    cluster.create("trainingjobs", training_job("sft-1"))
    job = wait_for(lambda: _or_none(cluster.batch.read_namespaced_job, "sft-1", cluster.namespace), 30, what="job")
    assert (job.spec.completion_mode, job.spec.completions, job.spec.parallelism) == ("Indexed", 2, 2)
    status = cluster.wait_phase("trainingjobs", "sft-1", ("Succeeded", "Failed"), timeout=60)
    assert status["phase"] == "Succeeded", status
    pods = cluster.core.list_namespaced_pod(cluster.namespace, label_selector="job-name=sft-1").items
    nodes = {n.metadata.name: n for n in cluster.core.list_node().items}
    assert len(pods) == 2 and all(nodes[p.spec.node_name].metadata.labels[POOL_LABEL] == "gpu" for p in pods)
    cluster.delete("trainingjobs", "sft-1")
    wait_gone(lambda: _or_none(cluster.batch.read_namespaced_job, "sft-1", cluster.namespace), what="job cleanup")


def test_runs_finished_while_the_operator_was_down_are_completed_after_it_restarts(
    cluster: Cluster, kube: KubeCluster, service_account: str, tmp_path: Path
) -> None:
    first = OperatorProcess(kube, cluster.namespace, service_account, tmp_path, name="first").start()
    first.wait_watching()
    cluster.create("sandboxruns", sandbox_run("run-across", {"SIMULATED_OUTCOME": "hang"}, maxAttempts=1))
    cluster.create("trainingjobs", training_job("sft-across"))
    wait_for(lambda: cluster.pods(**{RUN_LABEL: "run-across"}), 30, what="pod")
    wait_for(lambda: _or_none(cluster.batch.read_namespaced_job, "sft-across", cluster.namespace), 30, what="job")
    first.kill()
    # While no operator runs, kwok ends the pod (deadline) and the Job controller completes the Job.
    wait_for(lambda: all(p.status.phase == "Failed" for p in cluster.pods(**{RUN_LABEL: "run-across"}).values()), 30)
    job = lambda: _or_none(cluster.batch.read_namespaced_job, "sft-across", cluster.namespace)  # noqa: E731
    wait_for(lambda: (j := job()) and j.status.succeeded == 2, 60, what="job done")
    second = OperatorProcess(kube, cluster.namespace, service_account, tmp_path, name="second").start()
    try:
        second.wait_watching()
        run = cluster.wait_phase("sandboxruns", "run-across", ("Succeeded", "Failed"))
        assert (run["outcome"], run["reason"]) == ("timeout", "DeadlineExceeded")
        assert cluster.wait_phase("trainingjobs", "sft-across", ("Succeeded", "Failed"))["phase"] == "Succeeded"
        jobs = cluster.batch.list_namespaced_job(cluster.namespace).items
        assert [j.metadata.name for j in jobs] == ["sft-across"]  # resumed, not started again
    finally:
        second.stop()


def test_of_two_replicas_only_the_lease_holder_acts_and_the_other_takes_over(
    cluster: Cluster, kube: KubeCluster, service_account: str, tmp_path: Path
) -> None:
    election = {"SKILLGYM_OPERATOR_LEADER_ELECTION": "true", "SKILLGYM_OPERATOR_LEASE_NAME": "sg-skillgym-operator",
                "SKILLGYM_OPERATOR_LEASE_NAMESPACE": cluster.namespace, "SKILLGYM_OPERATOR_LEASE_DURATION_S": "4",
                "SKILLGYM_OPERATOR_LEASE_RENEW_S": "1"}
    replicas = {name: OperatorProcess(kube, cluster.namespace, service_account, tmp_path, name=name,
                                      settings={**election, "SKILLGYM_OPERATOR_IDENTITY": name}).start()
                for name in ("replica-a", "replica-b")}  # fmt: skip
    coordination = kubernetes.client.CoordinationV1Api(cluster.client)
    try:
        lease = wait_for(lambda: _or_none(coordination.read_namespaced_lease, OPERATOR_LEASE, cluster.namespace), 30,
                         what="lease")  # fmt: skip
        leader = lease.spec.holder_identity
        standby = next(name for name in replicas if name != leader)
        replicas[leader].wait_watching()
        cluster.create("sandboxruns", sandbox_run("run-led"))
        assert cluster.wait_phase("sandboxruns", "run-led", ("Succeeded", "Failed"))["phase"] == "Succeeded"
        assert "Starting the watch-stream" not in replicas[standby].log()
        assert "run-led" not in replicas[standby].log()

        replicas[leader].kill()
        cluster.create("sandboxruns", sandbox_run("run-after"))
        replicas[standby].wait_watching(timeout=60)
        assert cluster.wait_phase("sandboxruns", "run-after", ("Succeeded", "Failed"))["phase"] == "Succeeded"
        lease = _or_none(coordination.read_namespaced_lease, OPERATOR_LEASE, cluster.namespace)
        assert (lease.spec.holder_identity, lease.spec.lease_transitions) == (standby, 1)
    finally:
        for process in replicas.values():
            process.stop()


def test_watches_resume_after_the_api_server_restarts(
    cluster: Cluster, kube: KubeCluster, operator: OperatorProcess
) -> None:
    operator.errors_expected = True  # calls fail while the API server is down, and are retried
    cluster.create("sandboxruns", sandbox_run("run-before"))
    assert cluster.wait_phase("sandboxruns", "run-before", ("Succeeded", "Failed"))["phase"] == "Succeeded"
    kube.restart_apiserver(down_s=2)
    cluster.create("sandboxruns", sandbox_run("run-after-restart"))
    status = cluster.wait_phase("sandboxruns", "run-after-restart", ("Succeeded", "Failed"), timeout=90)
    assert status["phase"] == "Succeeded"


def test_the_trainers_launcher_submits_a_job_the_operator_runs_to_completion(
    cluster: Cluster, kube: KubeCluster, operator: OperatorProcess
) -> None:
    from skillgym_trainer.launcher import KubernetesLauncher, TrainingRequest
    from skillgym_trainer.settings import TrainerSettings

    settings = TrainerSettings(k8s_namespace=cluster.namespace, k8s_gpus=2)
    request = TrainingRequest(run_id="sft-launched", dataset_key="datasets/d1/train.jsonl",
                              base_model="HuggingFaceTB/SmolLM2-135M-Instruct", zero_stage=2)
    with kube.api_client() as client:
        assert KubernetesLauncher(settings, client).submit(request) == f"{cluster.namespace}/sft-launched"
    status = cluster.wait_phase("trainingjobs", "sft-launched", ("Succeeded", "Failed"), timeout=60)
    assert status["phase"] == "Succeeded", status
    job = _or_none(cluster.batch.read_namespaced_job, "sft-launched", cluster.namespace)
    assert job.spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"] == "2"
