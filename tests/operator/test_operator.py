"""The real operator (kopf) against an emulated Kubernetes API over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes
import pytest
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore
from skillgym_operator.builders.policy import pod_violations

from tests.operator.apiserver import ApiServer
from tests.operator.conftest import NAMESPACE, running_operator, wait_for

pytestmark = pytest.mark.integration

GROUP, VERSION = "skillgym.io", "v1alpha1"


def sandbox_run(name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "command": ["bash", "/tests/test.sh"],
        "role": "verifier",
        "image": "python:3.11-slim",
        "outputPrefix": f"sandbox/runs/{name}",
        "mounts": [
            {
                "target": "/app",
                "key": "sandbox/inputs/a.tar.gz",
                "writable": True,
                "resultKey": f"sandbox/runs/{name}/app.tar.gz",
            },
            {"target": "/tests", "key": "sandbox/inputs/t.tar.gz"},
        ],
        "limits": {"cpu": "500m", "memoryMb": 512, "wallSeconds": 30},
        **spec,
    }
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "SandboxRun",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": body,
    }


def create(api: ApiServer, plural: str, body: dict[str, Any]) -> None:
    kubernetes.client.CustomObjectsApi(api.api_client).create_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, plural, body
    )


def status_of(api: ApiServer, plural: str, name: str) -> dict[str, Any]:
    return api.objects(f"{GROUP}/{VERSION}/{plural}", NAMESPACE).get(name, {}).get("status") or {}


def set_pod_status(api: ApiServer, pod: str, status: dict[str, Any]) -> None:
    """Play the kubelet: report container states the way a node would."""
    kubernetes.client.CoreV1Api(api.api_client).patch_namespaced_pod_status(pod, NAMESPACE, {"status": status})


def container(name: str, state: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "image": "img", "imageID": "", "ready": False, "restartCount": 0, "state": state}


def finished(name: str, exit_code: int, message: str = "ok", reason: str = "Completed") -> dict[str, Any]:
    return container(name, {"terminated": {"exitCode": exit_code, "reason": reason, "message": message}})


def pod_finished(
    run_code: int, *, message: str = "ok", reason: str = "Completed", push_code: int = 0
) -> dict[str, Any]:
    return {
        "phase": "Succeeded" if run_code == 0 and push_code == 0 else "Failed",
        "initContainerStatuses": [finished("fetch", 0)],
        "containerStatuses": [finished("run", run_code, message, reason), finished("push", push_code, "")],
    }


def test_sandbox_run_creates_locked_down_pod_and_network_policy(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-a"))
    pods = wait_for(lambda: apiserver.objects("v1/pods", NAMESPACE), what="pod")
    pod = pods["run-a-a1"]
    assert pod["metadata"]["labels"]["skillgym.io/sandbox-run"] == "run-a"
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "SandboxRun"
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Never"
    assert spec["activeDeadlineSeconds"] == 30 + operator_settings_of().push_grace_s
    assert spec["automountServiceAccountToken"] is False
    run = next(c for c in spec["containers"] if c["name"] == "run")
    assert run["image"] == "python:3.11-slim"
    assert run["command"][-2:] == ["bash", "/tests/test.sh"]
    security = run["securityContext"]
    assert security["readOnlyRootFilesystem"] and security["runAsNonRoot"]
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert run["resources"]["limits"]["memory"] == "512Mi"
    mounts = {m["mountPath"]: m["readOnly"] for m in run["volumeMounts"] if m["mountPath"] in ("/app", "/tests")}
    assert mounts == {"/app": False, "/tests": True}
    assert [c["name"] for c in spec["initContainers"]] == ["fetch"]
    assert pod_violations(spec) == []

    policy = wait_for(lambda: apiserver.objects("networking.k8s.io/v1/networkpolicies", NAMESPACE), what="policy")
    rules = policy["skillgym-sandbox"]["spec"]
    assert rules["podSelector"]["matchExpressions"] == [{"key": "skillgym.io/sandbox-run", "operator": "Exists"}]
    assert rules["policyTypes"] == ["Ingress", "Egress"] and rules["ingress"] == []
    assert all(rule["to"] for rule in rules["egress"])  # no rule opens egress to everywhere
    assert wait_for(lambda: status_of(apiserver, "sandboxruns", "run-a").get("phase") == "Pending")


def test_pod_success_completes_the_run_and_cleans_the_pod(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-ok"))
    wait_for(lambda: "run-ok-a1" in apiserver.objects("v1/pods", NAMESPACE), what="pod")
    set_pod_status(
        apiserver, "run-ok-a1", {"phase": "Running", "containerStatuses": [container("run", {"running": {}})]}
    )
    wait_for(lambda: status_of(apiserver, "sandboxruns", "run-ok").get("phase") == "Running", what="Running")
    set_pod_status(apiserver, "run-ok-a1", pod_finished(0))
    status = wait_for(
        lambda: (s := status_of(apiserver, "sandboxruns", "run-ok")).get("phase") == "Succeeded" and s, what="done"
    )
    assert status["outcome"] == "ok" and status["exitCode"] == 0
    assert status["artifacts"]["stdout"] == "sandbox/runs/run-ok/stdout"
    assert status["artifacts"]["mounts"] == {"/app": "sandbox/runs/run-ok/app.tar.gz"}
    assert {c["type"]: c["status"] for c in status["conditions"]}["Completed"] == "True"
    wait_for(lambda: "run-ok-a1" not in apiserver.objects("v1/pods", NAMESPACE), what="pod cleanup")


UNSCHEDULABLE = "0/3 nodes are available: 3 node(s) had untolerated taint {skillgym.io/sandbox: true}."


def test_a_pod_the_cluster_cannot_start_says_why_in_its_runs_status(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-stuck"))
    wait_for(lambda: "run-stuck-a1" in apiserver.objects("v1/pods", NAMESPACE), what="pod")
    unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": UNSCHEDULABLE}
    set_pod_status(apiserver, "run-stuck-a1", {"phase": "Pending", "conditions": [unschedulable]})
    status = wait_for(lambda: (s := status_of(apiserver, "sandboxruns", "run-stuck")).get("reason") and s, what="why")
    assert (status["phase"], status["reason"], status["message"]) == ("Pending", "Unschedulable", UNSCHEDULABLE)
    pulling = container("run", {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}})
    set_pod_status(apiserver, "run-stuck-a1", {"phase": "Pending", "conditions": [], "containerStatuses": [pulling]})
    wait_for(lambda: status_of(apiserver, "sandboxruns", "run-stuck").get("reason") == "ImagePullBackOff", what="pull")
    assert status_of(apiserver, "sandboxruns", "run-stuck")["message"] == "run: Back-off pulling image"
    set_pod_status(apiserver, "run-stuck-a1", {"phase": "Running", "containerStatuses": [container("run", {"running": {}})]})
    status = wait_for(lambda: (s := status_of(apiserver, "sandboxruns", "run-stuck")).get("phase") == "Running" and s)
    assert status["reason"] == ""  # no longer held up


def test_command_failure_and_wall_timeout_map_to_outcomes(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-fail"))
    create(apiserver, "sandboxruns", sandbox_run("run-slow"))
    create(apiserver, "sandboxruns", sandbox_run("run-oom"))
    wait_for(lambda: len(apiserver.objects("v1/pods", NAMESPACE)) == 3, what="pods")
    set_pod_status(apiserver, "run-fail-a1", pod_finished(3, reason="Error"))
    set_pod_status(apiserver, "run-slow-a1", pod_finished(137, message="timeout", reason="Error"))
    set_pod_status(apiserver, "run-oom-a1", pod_finished(137, message="", reason="OOMKilled"))
    for name, outcome, code in (("run-fail", "ok", 3), ("run-slow", "timeout", 137), ("run-oom", "oom", 137)):
        status = wait_for(
            lambda n=name: (s := status_of(apiserver, "sandboxruns", n)).get("phase") in ("Succeeded", "Failed") and s,
            what=name,
        )
        assert (status["phase"], status["outcome"], status["exitCode"]) == ("Failed", outcome, code), name


def test_pod_deadline_is_a_timeout(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-late"))
    wait_for(lambda: "run-late-a1" in apiserver.objects("v1/pods", NAMESPACE), what="pod")
    set_pod_status(apiserver, "run-late-a1", {"phase": "Failed", "reason": "DeadlineExceeded", "message": "late"})
    status = wait_for(lambda: (s := status_of(apiserver, "sandboxruns", "run-late")).get("outcome") and s)
    assert (status["phase"], status["outcome"], status["reason"]) == ("Failed", "timeout", "DeadlineExceeded")


def test_infrastructure_failure_retries_with_a_new_pod(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-retry", maxAttempts=2))
    wait_for(lambda: "run-retry-a1" in apiserver.objects("v1/pods", NAMESPACE), what="pod")
    set_pod_status(
        apiserver, "run-retry-a1", {"phase": "Failed", "initContainerStatuses": [finished("fetch", 1, "store down")]}
    )
    wait_for(lambda: "run-retry-a2" in apiserver.objects("v1/pods", NAMESPACE), 20, what="second attempt")
    wait_for(lambda: status_of(apiserver, "sandboxruns", "run-retry").get("attempt") == 2, what="attempt 2")
    set_pod_status(
        apiserver, "run-retry-a2", {"phase": "Failed", "initContainerStatuses": [finished("fetch", 1, "still down")]}
    )
    status = wait_for(lambda: (s := status_of(apiserver, "sandboxruns", "run-retry")).get("phase") == "Failed" and s)
    assert (status["outcome"], status["reason"]) == ("error", "FetchFailed")
    assert "run-retry-a3" not in apiserver.objects("v1/pods", NAMESPACE)


def test_invalid_spec_fails_the_run_without_a_pod(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-bad", command=[]))
    status = wait_for(lambda: (s := status_of(apiserver, "sandboxruns", "run-bad")).get("phase") and s)
    assert (status["phase"], status["reason"]) == ("Failed", "invalid_spec")
    assert not any(name.startswith("run-bad") for name in apiserver.objects("v1/pods", NAMESPACE))


def test_unsafe_pod_is_refused_and_fails_the_run(
    apiserver: ApiServer, operator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(operator_settings_of(), "run_as_user", 0)
    create(apiserver, "sandboxruns", sandbox_run("run-root"))
    status = wait_for(lambda: (s := status_of(apiserver, "sandboxruns", "run-root")).get("phase") and s)
    assert (status["phase"], status["outcome"], status["reason"]) == ("Failed", "error", "unsafe_pod")
    assert "container run: runAsUser is 0 (root)" in status["message"]
    assert not any(name.startswith("run-root") for name in apiserver.objects("v1/pods", NAMESPACE))
    events = wait_for(
        lambda: [e for e in apiserver.objects("v1/events", NAMESPACE).values() if e["reason"] == "UnsafePod"]
    )
    assert events[0]["type"] == "Warning"


def test_namespace_quota_queues_runs(apiserver: ApiServer, operator: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operator_settings_of(), "max_active_runs_per_namespace", 1)
    create(apiserver, "sandboxruns", sandbox_run("run-q1"))
    wait_for(lambda: "run-q1-a1" in apiserver.objects("v1/pods", NAMESPACE), what="first pod")
    create(apiserver, "sandboxruns", sandbox_run("run-q2"))
    wait_for(lambda: status_of(apiserver, "sandboxruns", "run-q2").get("phase") == "Queued", what="queued")
    assert "run-q2-a1" not in apiserver.objects("v1/pods", NAMESPACE)
    set_pod_status(apiserver, "run-q1-a1", pod_finished(0))
    wait_for(lambda: "run-q2-a1" in apiserver.objects("v1/pods", NAMESPACE), 20, what="queued run starts")


def test_pods_lost_while_no_operator_watched_are_replaced_or_retried(
    apiserver: ApiServer, operator_settings: Any
) -> None:
    with running_operator():
        create(apiserver, "sandboxruns", sandbox_run("run-lost", maxAttempts=2))
        create(apiserver, "sandboxruns", sandbox_run("run-unmade"))
        wait_for(lambda: {"run-lost-a1", "run-unmade-a1"} <= set(apiserver.objects("v1/pods", NAMESPACE)), what="pods")
        set_pod_status(apiserver, "run-lost-a1", {"phase": "Running", "containerStatuses": [container("run", {"running": {}})]})
        wait_for(lambda: status_of(apiserver, "sandboxruns", "run-lost").get("phase") == "Running", what="Running")
    # With no operator watching: one run's pod is deleted, the other's was never made (an operator
    # stopped between the run's status and its pod).
    core = kubernetes.client.CoreV1Api(apiserver.api_client)
    core.delete_namespaced_pod("run-lost-a1", NAMESPACE)
    core.delete_namespaced_pod("run-unmade-a1", NAMESPACE)
    wait_for(lambda: not apiserver.objects("v1/pods", NAMESPACE), what="pods gone")
    with running_operator():
        wait_for(lambda: "run-unmade-a1" in apiserver.objects("v1/pods", NAMESPACE), 20, what="pod made again")
        wait_for(lambda: "run-lost-a2" in apiserver.objects("v1/pods", NAMESPACE), 20, what="lost pod's retry")
        status = status_of(apiserver, "sandboxruns", "run-lost")
        assert status["attempt"] == 2 and "PodDeleted" in str(status.get("conditions"))


def operator_settings_of() -> Any:
    from skillgym_operator import handlers

    return handlers.SETTINGS


def test_deleting_a_run_removes_its_pod_and_leaves_the_namespace_policy(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-del"))
    wait_for(lambda: "run-del-a1" in apiserver.objects("v1/pods", NAMESPACE), what="pod")
    run = apiserver.objects(f"{GROUP}/{VERSION}/sandboxruns", NAMESPACE)["run-del"]
    assert not run["metadata"].get("finalizers") and not run["metadata"].get("annotations")
    kubernetes.client.CustomObjectsApi(apiserver.api_client).delete_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, "sandboxruns", "run-del"
    )
    wait_for(lambda: "run-del" not in apiserver.objects(f"{GROUP}/{VERSION}/sandboxruns", NAMESPACE), what="gone")
    wait_for(lambda: "run-del-a1" not in apiserver.objects("v1/pods", NAMESPACE), what="pod removed")
    assert "skillgym-sandbox" in apiserver.objects("networking.k8s.io/v1/networkpolicies", NAMESPACE)


def test_a_deleted_or_loosened_sandbox_policy_is_put_back(apiserver: ApiServer, operator: Any) -> None:
    create(apiserver, "sandboxruns", sandbox_run("run-net"))
    policies = "networking.k8s.io/v1/networkpolicies"
    wanted = wait_for(lambda: apiserver.objects(policies, NAMESPACE).get("skillgym-sandbox"), what="policy")["spec"]
    networking = kubernetes.client.NetworkingV1Api(apiserver.api_client)
    networking.patch_namespaced_network_policy("skillgym-sandbox", NAMESPACE, {"spec": {"egress": [{}]}})
    wait_for(lambda: apiserver.objects(policies, NAMESPACE)["skillgym-sandbox"]["spec"] == wanted, what="restored")
    networking.delete_namespaced_network_policy("skillgym-sandbox", NAMESPACE)
    wait_for(lambda: apiserver.objects(policies, NAMESPACE).get("skillgym-sandbox", {}).get("spec") == wanted,
             what="recreated")  # fmt: skip


def training_job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "datasetKey": "datasets/d1/train.jsonl",
            "baseModel": "HuggingFaceTB/SmolLM2-135M-Instruct",
            "trainerConfig": {"learning_rate": 2e-5, "epochs": 1},
            "deepspeedConfig": {"zero_optimization": {"stage": 2}},
            "gpus": 4,
            "nodes": 2,
        },
    }


def test_training_job_yields_indexed_gpu_job_and_tracks_it(
    apiserver: ApiServer, operator: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "store")
    monkeypatch.setenv("SKILLGYM_STORE", "local")
    monkeypatch.setenv("SKILLGYM_STORE_ROOT", str(tmp_path / "store"))
    create(apiserver, "trainingjobs", training_job("sft-1"))
    job = wait_for(lambda: apiserver.objects("batch/v1/jobs", NAMESPACE).get("sft-1"), what="job")
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 2, 2)
    pod = spec["template"]["spec"]
    assert pod["subdomain"] == "sft-1-workers"
    container = pod["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"
    command = container["command"]
    assert command[0] == "torchrun" and "--nnodes=2" in command and "--nproc-per-node=4" in command
    assert "--rdzv-endpoint=sft-1-0.sft-1-workers:29500" in command and "--resume" in command
    service = apiserver.objects("v1/services", NAMESPACE)["sft-1-workers"]
    assert service["spec"]["clusterIP"] == "None"
    config = apiserver.objects("v1/configmaps", NAMESPACE)["sft-1-config"]
    assert '"stage": 2' in config["data"]["deepspeed.json"]

    batch = kubernetes.client.BatchV1Api(apiserver.api_client)
    batch.patch_namespaced_job_status("sft-1", NAMESPACE, {"status": {"active": 2}})
    wait_for(lambda: status_of(apiserver, "trainingjobs", "sft-1").get("phase") == "Running", what="running")
    put_json(store, "training/sft-1/progress.json", {"step": 5, "total_steps": 20, "metrics": {"loss": 1.25}})
    store.put_bytes("training/sft-1/checkpoints/step-5/model.safetensors", b"weights")
    # the progress timer shares this process with the test; a loaded machine can hold it back a while
    status = wait_for(lambda: (s := status_of(apiserver, "trainingjobs", "sft-1")).get("checkpoints") and s, 60)
    assert status["progress"] == {"step": 5, "totalSteps": 20, "fraction": 0.25}
    assert status["metrics"] == {"loss": 1.25}
    assert status["checkpoints"] == ["training/sft-1/checkpoints/step-5"]
    batch.patch_namespaced_job_status(
        "sft-1",
        NAMESPACE,
        {"status": {"active": 0, "succeeded": 2, "conditions": [{"type": "Complete", "status": "True"}]}},
    )
    wait_for(lambda: status_of(apiserver, "trainingjobs", "sft-1").get("phase") == "Succeeded", what="succeeded")

    kubernetes.client.CustomObjectsApi(apiserver.api_client).delete_namespaced_custom_object(
        GROUP, VERSION, NAMESPACE, "trainingjobs", "sft-1"
    )
    wait_for(lambda: "sft-1" not in apiserver.objects("batch/v1/jobs", NAMESPACE), what="job cleanup")
    wait_for(lambda: "sft-1-workers" not in apiserver.objects("v1/services", NAMESPACE), what="service cleanup")
    events = apiserver.objects("v1/events", NAMESPACE).values()
    assert {"JobCreated", "Running", "Succeeded"} <= {event["reason"] for event in events}


def test_a_run_with_a_build_context_waits_for_its_image_then_runs_on_it(
    apiserver: ApiServer, operator: Any, operator_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No container runs under the emulated API server: the test plays the Job controller, marking
    the Kaniko Job complete (or failed) as the cluster would once the build ends."""
    from skillgym_operator import builders
    from skillgym_operator.spec import BuildSpec

    monkeypatch.setattr(operator_settings, "build_poll_s", 0.2)
    monkeypatch.setattr(operator_settings, "build_registry", "registry.example.test:5000/sg")
    monkeypatch.setattr(operator_settings, "build_registry_insecure", True)
    build = {"contextKey": "sandbox/inputs/ctx-a.tar.gz"}
    create(apiserver, "sandboxruns", sandbox_run("run-built", image=None, build=build))
    job_name = builders.build_job_name(BuildSpec.model_validate(build), operator_settings)
    job = wait_for(lambda: apiserver.objects("batch/v1/jobs", NAMESPACE).get(job_name), what="build job")
    kaniko = job["spec"]["template"]["spec"]["containers"][0]
    reference = builders.image_reference(BuildSpec.model_validate(build), operator_settings)
    assert reference.startswith("registry.example.test:5000/sg/skillgym-task:")
    assert f"--destination={reference}" in kaniko["args"]
    # plain HTTP to the build registry alone, never to the registries base images come from
    assert "--insecure-registry=registry.example.test:5000" in kaniko["args"]
    assert not {"--insecure", "--insecure-pull"} & set(kaniko["args"])
    wait_for(lambda: status_of(apiserver, "sandboxruns", "run-built").get("phase") == "Building", what="Building")
    assert "run-built-a1" not in apiserver.objects("v1/pods", NAMESPACE)
    batch = kubernetes.client.BatchV1Api(apiserver.api_client)
    batch.patch_namespaced_job_status(job_name, NAMESPACE, {"status": {"succeeded": 1, "conditions": [
        {"type": "Complete", "status": "True"}]}})
    pod = wait_for(lambda: apiserver.objects("v1/pods", NAMESPACE).get("run-built-a1"), what="pod on the built image")
    assert pod["spec"]["containers"][0]["image"] == reference

    other = {"contextKey": "sandbox/inputs/ctx-b.tar.gz"}
    create(apiserver, "sandboxruns", sandbox_run("run-unbuilt", image=None, build=other))
    other_job = builders.build_job_name(BuildSpec.model_validate(other), operator_settings)
    wait_for(lambda: other_job in apiserver.objects("batch/v1/jobs", NAMESPACE), what="second build job")
    batch.patch_namespaced_job_status(other_job, NAMESPACE, {"status": {"failed": 3, "conditions": [
        {"type": "Failed", "status": "True", "message": "RUN apt-get install exited 100"}]}})
    status = wait_for(lambda: (s := status_of(apiserver, "sandboxruns", "run-unbuilt")).get("phase") == "Failed" and s,
                      what="build failure")
    assert status["reason"] == "BuildFailed" and "exited 100" in status["message"]
