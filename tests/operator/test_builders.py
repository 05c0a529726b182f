"""Pure manifest builders."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest
from skillgym_operator import builders
from skillgym_operator.builders.sandbox import RUN_WRAPPER, active_deadline_s
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import InvalidSpecError, parse_sandbox_run, parse_training_job

SETTINGS = OperatorSettings()
RUN = {
    "apiVersion": "skillgym.io/v1alpha1",
    "kind": "SandboxRun",
    "metadata": {"name": "sbx-1", "namespace": "ns", "uid": "u-1"},
}
TRAINING = {**RUN, "kind": "TrainingJob", "metadata": {"name": "sft-7", "namespace": "ns", "uid": "u-2"}}


def run_spec(**extra: Any) -> Any:
    return parse_sandbox_run(
        {
            "command": ["bash", "/solution/solve.sh"],
            "outputPrefix": "sandbox/runs/sbx-1/",
            "mounts": [
                {"target": "/app", "key": "in/app.tar.gz", "writable": True, "resultKey": "out/app.tar.gz"},
                {"target": "/solution", "key": "in/sol.tar.gz"},
            ],
            "limits": {"memoryMb": 256, "wallSeconds": 12.5, "cpu": "250m"},
            **extra,
        }
    )


def test_sandbox_pod_is_valid_and_locked_down() -> None:
    pod = builders.sandbox_pod(RUN, run_spec(), "task:1", 2, SETTINGS)
    kubernetes_validate.validate(pod, "1.30", strict=True)
    spec = pod["spec"]
    assert pod["metadata"]["name"] == "sbx-1-a2"
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert spec["activeDeadlineSeconds"] == 13 + SETTINGS.push_grace_s
    assert (
        spec["securityContext"]["runAsNonRoot"]
        and spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    )
    for container in [*spec["initContainers"], *spec["containers"]]:
        security = container["securityContext"]
        assert security["readOnlyRootFilesystem"] and security["capabilities"]["drop"] == ["ALL"]
        assert security["allowPrivilegeEscalation"] is False
        assert container["resources"]["limits"]
    run = spec["containers"][0]
    assert run["command"][:2] == ["/bin/sh", "-c"] and run["command"][2] == RUN_WRAPPER
    assert run["command"][4:] == ["bash", "/solution/solve.sh"]
    assert {"name": "SKILLGYM_WALL_SECONDS", "value": "13"} in run["env"]
    assert run["terminationMessagePath"] == "/skillgym/io/outcome"
    push = spec["containers"][1]
    assert all(m["readOnly"] for m in push["volumeMounts"] if m["mountPath"].startswith("/skillgym/mounts"))


def test_sandbox_pod_writable_paths_are_size_capped_volumes() -> None:
    spec = run_spec(limits={"ephemeralStorageMb": 300})
    pod_spec = builders.sandbox_pod(RUN, spec, "task:1", 1, SETTINGS)["spec"]
    volumes = {v["name"]: v["emptyDir"]["sizeLimit"] for v in pod_spec["volumes"]}
    assert volumes == {"io": "64Mi", "run-tmp": "300Mi", "runner-tmp": "256Mi", "mount-0": "300Mi", "mount-1": "300Mi"}
    fetch, (run, push) = pod_spec["initContainers"][0], pod_spec["containers"]
    # Only fetch writes the staged mounts and only the command's own container writes the I/O directory.
    assert not any(m.get("readOnly") for m in fetch["volumeMounts"])
    assert all(m["readOnly"] for m in push["volumeMounts"] if m["name"] != "runner-tmp")
    assert {m["mountPath"] for m in run["volumeMounts"]} == {"/skillgym/io", "/tmp", "/app", "/solution"}


def test_uncovered_workdir_gets_its_own_writable_volume() -> None:
    covered = builders.sandbox_pod(RUN, run_spec(workdir="/app/src"), "task:1", 1, SETTINGS)["spec"]
    assert "workdir" not in {v["name"] for v in covered["volumes"]}
    bare = builders.sandbox_pod(RUN, run_spec(mounts=[], workdir="/work"), "task:1", 1, SETTINGS)["spec"]
    assert {"name": "workdir", "emptyDir": {"sizeLimit": "1024Mi"}} in bare["volumes"]
    assert {"name": "workdir", "mountPath": "/work"} in bare["containers"][0]["volumeMounts"]
    kubernetes_validate.validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": bare}, "1.30")


def test_transfer_plan_carries_keys_and_limits() -> None:
    plan = builders.transfer_plan(run_spec(stdinKey="in/stdin"))
    assert plan["outputPrefix"] == "sandbox/runs/sbx-1"
    assert plan["stdinKey"] == "in/stdin" and plan["wallSeconds"] == 12.5
    assert plan["mounts"][0] == {
        "path": "/skillgym/mounts/0", "target": "/app", "key": "in/app.tar.gz", "writable": True, "resultKey": "out/app.tar.gz",
    }  # fmt: skip
    json.dumps(plan)


def test_explicit_timeout_overrides_the_derived_deadline() -> None:
    assert active_deadline_s(run_spec(timeoutSeconds=99), SETTINGS) == 99


def test_network_policy_denies_ingress_and_limits_egress_to_the_store() -> None:
    policy = builders.sandbox_network_policy("ns", SETTINGS)
    kubernetes_validate.validate(policy, "1.30", strict=True)
    assert (policy["metadata"]["name"], policy["metadata"]["namespace"]) == ("skillgym-sandbox", "ns")
    assert policy["spec"]["ingress"] == []
    store_rule = policy["spec"]["egress"][0]
    assert store_rule["ports"] == [{"protocol": "TCP", "port": 9000}]
    assert store_rule["to"] == [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "minio"}}}]
    closed = builders.sandbox_network_policy("ns", SETTINGS.model_copy(update={"store_egress_pod_labels": {}}))
    assert closed["spec"]["egress"] == []


def test_the_network_policy_selects_every_sandbox_pod_it_confines() -> None:
    policy = builders.sandbox_network_policy("ns", SETTINGS)
    selector = policy["spec"]["podSelector"]
    for attempt in (1, 2):
        labels = builders.sandbox_pod(RUN, run_spec(), "img", attempt, SETTINGS)["metadata"]["labels"]
        assert all(labels.get(key) == value for key, value in selector["matchLabels"].items())
        assert all(expression["key"] in labels for expression in selector["matchExpressions"])
    assert [e["operator"] for e in selector["matchExpressions"]] == ["Exists"]


def test_kaniko_build_is_cached_by_context() -> None:
    spec = run_spec(build={"contextKey": "sandbox/inputs/abc.tar.gz"})
    assert spec.build is not None
    job = builders.kaniko_build_job(spec.build, "ns", SETTINGS)
    kubernetes_validate.validate(job, "1.30", strict=True)
    pod = job["spec"]["template"]["spec"]
    (fetch,) = pod["initContainers"]
    (kaniko,) = pod["containers"]
    plan = json.loads(next(e["value"] for e in fetch["env"] if e["name"] == "SKILLGYM_SANDBOX_PLAN"))
    assert plan["mounts"] == [{"path": "/workspace", "key": "sandbox/inputs/abc.tar.gz"}]
    assert "--context=dir:///workspace" in kaniko["args"]
    assert f"--destination={builders.image_reference(spec.build, SETTINGS)}" in kaniko["args"]
    # The root container that runs the Dockerfile's RUN steps holds no store credentials.
    assert "env" not in kaniko and "envFrom" not in kaniko
    assert {"name": "context", "mountPath": "/workspace", "readOnly": True} in kaniko["volumeMounts"]
    other = run_spec(build={"contextKey": "sandbox/inputs/def.tar.gz"}).build
    assert builders.build_job_name(spec.build, SETTINGS) == job["metadata"]["name"] != builders.build_job_name(other, SETTINGS)


def test_training_manifests_validate() -> None:
    spec = parse_training_job({"datasetKey": "d", "baseModel": "m", "gpus": 8, "nodes": 4, "deepspeedConfig": {"a": 1}})
    job = builders.training_job(TRAINING, spec, SETTINGS)
    for manifest in (job, builders.training_service(TRAINING), builders.training_config_map(TRAINING, spec)):
        kubernetes_validate.validate(manifest, "1.30", strict=True)
    assert job["spec"]["backoffLimit"] == 12
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][container["command"].index("--output-prefix") + 1] == "training/sft-7"
    cpu_only = builders.training_job(
        TRAINING, parse_training_job({"datasetKey": "d", "baseModel": "m", "gpus": 0}), SETTINGS
    )
    assert "nvidia.com/gpu" not in cpu_only["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert "tolerations" not in cpu_only["spec"]["template"]["spec"]
    pod = job["spec"]["template"]["spec"]
    assert {"name": "scratch", "emptyDir": {"sizeLimit": "200Gi"}} in pod["volumes"]
    assert {"name": "HOME", "value": "/tmp"} in container["env"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["securityContext"]["runAsGroup"] == SETTINGS.run_as_group


@pytest.mark.parametrize(
    "bad",
    [{"command": []}, {"command": ["x"]}, {"command": ["x"], "outputPrefix": "p", "role": "judge"},
     {"command": ["x"], "outputPrefix": "p", "mounts": [{"target": "relative"}]},
     *({"command": ["x"], "outputPrefix": "p", "mounts": [{"target": t}]}
       for t in ("/", "/tmp", "/proc/self", "/dev", "/sys/fs", "/skillgym/io", "/app/../etc")),
     {"command": ["x"], "outputPrefix": "p", "mounts": [{"target": "/app"}, {"target": "/app/"}]}],
)  # fmt: skip
def test_invalid_specs_raise_a_typed_error(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidSpecError) as info:
        parse_sandbox_run(bad)
    assert info.value.reason == "invalid_spec" and info.value.details["errors"]


def test_training_scratch_must_be_a_quantity() -> None:
    with pytest.raises(InvalidSpecError):
        parse_training_job({"datasetKey": "d", "baseModel": "m", "resources": {"scratch": "lots"}})


def test_a_session_pod_runs_the_step_loop_and_a_relay_that_alone_holds_the_store_keys() -> None:
    from skillgym_operator.builders.policy import pod_violations
    from skillgym_operator.session import STEP_LOOP

    spec = run_spec(command=["bash", "-lc"], session={"channel": "sandbox/runs/sbx-1/session", "idleSeconds": 30})
    pod = builders.sandbox_pod(RUN, spec, "task:1", 1, SETTINGS)
    kubernetes_validate.validate(pod, "1.30", strict=True)
    containers = {c["name"]: c for c in pod["spec"]["containers"]}
    assert list(containers) == ["run", "push", "relay"]
    run, relay = containers["run"], containers["relay"]
    assert run["command"][4:] == ["/bin/sh", "-c", STEP_LOOP, "session", "bash", "-lc"]
    assert "envFrom" not in run and relay["envFrom"] == containers["push"]["envFrom"]
    assert relay["command"] == ["python", "-m", "skillgym_operator.session"]
    assert {m["mountPath"]: m.get("readOnly", False) for m in relay["volumeMounts"]} == {"/skillgym/io": False,
                                                                                         "/tmp": False}
    plan = json.loads(relay["env"][0]["value"])
    assert plan["session"] == {"channel": "sandbox/runs/sbx-1/session", "idleSeconds": 30}
    assert {"name": "SKILLGYM_STEP_OUTPUT_BYTES", "value": str(spec.limits.output_bytes)} in run["env"]
    assert pod_violations(pod["spec"]) == []
    plain = builders.sandbox_pod(RUN, run_spec(), "t", 1, SETTINGS)
    assert "relay" not in {c["name"] for c in plain["spec"]["containers"]}


@pytest.mark.parametrize("session", [{}, {"channel": ""}, {"channel": "c", "idleSeconds": 0}])
def test_malformed_sessions_are_refused(session: dict[str, Any]) -> None:
    with pytest.raises(InvalidSpecError):
        run_spec(session=session)


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a NetworkPolicy's podSelector picks a pod with ``labels`` (Exists and In only)."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        if expression["key"] not in labels:
            return False
        if expression["operator"] == "In" and labels[expression["key"]] not in expression["values"]:
            return False
    return True


def test_a_public_network_run_alone_gets_egress_beyond_the_store_and_never_to_private_ranges() -> None:
    public = builders.public_network_policy("ns", SETTINGS)
    kubernetes_validate.validate(public, "1.30", strict=True)
    assert public["spec"]["policyTypes"] == ["Egress"] and "ingress" not in public["spec"]
    offline_pod = builders.sandbox_pod(RUN, run_spec(), "img", 1, SETTINGS)
    public_pod = builders.sandbox_pod(RUN, run_spec(network="public"), "img", 1, SETTINGS)
    selector = public["spec"]["podSelector"]
    assert _selects(selector, public_pod["metadata"]["labels"])
    assert not _selects(selector, offline_pod["metadata"]["labels"])
    confined = builders.sandbox_network_policy("ns", SETTINGS)["spec"]["podSelector"]
    assert _selects(confined, public_pod["metadata"]["labels"]) and _selects(confined, offline_pod["metadata"]["labels"])
    v4, v6 = (rule["ipBlock"] for rule in public["spec"]["egress"][0]["to"])
    assert v4["cidr"] == "0.0.0.0/0" and {"10.0.0.0/8", "169.254.0.0/16", "192.168.0.0/16"} <= set(v4["except"])
    assert v6["cidr"] == "::/0" and "fc00::/7" in v6["except"]
    assert set(builders.sandbox_network_policies("ns", SETTINGS)) == {"skillgym-sandbox", "skillgym-sandbox-public"}


def test_with_public_network_off_public_runs_stay_offline() -> None:
    closed = SETTINGS.model_copy(update={"public_network": False})
    pod = builders.sandbox_pod(RUN, run_spec(network="public"), "img", 1, closed)
    assert "skillgym.io/network" not in pod["metadata"]["labels"]
    assert set(builders.sandbox_network_policies("ns", closed)) == {"skillgym-sandbox"}
    with pytest.raises(ValueError, match="not an address range"):
        OperatorSettings(public_egress_blocked=["10.0.0.0/8", "intranet"])
    with pytest.raises(InvalidSpecError):
        run_spec(network="allowlist")


def test_a_tasks_user_is_one_more_layer_of_its_image_build() -> None:
    from skillgym_core.sandbox.container.users import REMAP_SCRIPT

    spec = run_spec(build={"contextKey": "sandbox/inputs/abc.tar.gz", "user": "agent"})
    assert spec.build is not None
    job = builders.kaniko_build_job(spec.build, "ns", SETTINGS)
    kubernetes_validate.validate(job, "1.30", strict=True)
    (fetch,) = job["spec"]["template"]["spec"]["initContainers"]
    plan = json.loads(next(e["value"] for e in fetch["env"] if e["name"] == "SKILLGYM_SANDBOX_PLAN"))
    script, layer = plan["writes"]
    assert script == {"path": "/workspace/skillgym-remap-user.sh", "text": REMAP_SCRIPT}
    assert layer["path"] == "/workspace/Dockerfile" and layer["append"] is True
    assert layer["text"].startswith("USER root\n") and f"agent {SETTINGS.run_as_user}" in layer["text"]
    plain = run_spec(build={"contextKey": "sandbox/inputs/abc.tar.gz"}).build
    other_uid = SETTINGS.model_copy(update={"run_as_user": 4242})
    names = {builders.build_job_name(spec.build, SETTINGS), builders.build_job_name(plain, SETTINGS),
             builders.build_job_name(spec.build, other_uid)}  # fmt: skip
    assert len(names) == 3  # the layer and the uid it gives are part of what is cached
    env = {e["name"] for e in builders.sandbox_pod(RUN, spec, "img", 1, SETTINGS)["spec"]["containers"][0]["env"]}
    assert "HOME" not in env  # the image's home of that user, not /tmp
    plain_env = builders.sandbox_pod(RUN, run_spec(build={"contextKey": "k"}), "img", 1, SETTINGS)
    assert {"name": "HOME", "value": "/tmp"} in plain_env["spec"]["containers"][0]["env"]


def test_a_prebuilt_image_given_a_user_is_built_from_a_one_line_dockerfile() -> None:
    spec = run_spec(build={"baseImage": "registry.example.test/tools:1.2", "user": "1000"})
    assert spec.build is not None
    job = builders.kaniko_build_job(spec.build, "ns", SETTINGS)
    (fetch,) = job["spec"]["template"]["spec"]["initContainers"]
    plan = json.loads(next(e["value"] for e in fetch["env"] if e["name"] == "SKILLGYM_SANDBOX_PLAN"))
    assert plan["mounts"] == [{"path": "/workspace", "key": None}]
    assert plan["writes"][0] == {"path": "/workspace/Dockerfile", "text": "FROM registry.example.test/tools:1.2\n"}


@pytest.mark.parametrize("build", [
    {"contextKey": "k", "baseImage": "x:1"}, {}, {"contextKey": "k", "user": "root"},
    {"contextKey": "k", "dockerfile": "../../etc/Dockerfile"}, {"contextKey": "k", "user": "a b"},
    {"baseImage": "x:1\nRUN curl evil"},
])  # fmt: skip
def test_builds_that_name_no_single_source_or_a_bad_user_are_refused(build: dict[str, Any]) -> None:
    with pytest.raises(InvalidSpecError):
        run_spec(build=build)
