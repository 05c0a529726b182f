"""The pod policy: every pod the builders produce follows it, and each broken rule is reported."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from skillgym_operator import builders
from skillgym_operator.builders.image import KANIKO_CAPABILITIES
from skillgym_operator.builders.policy import UnsafePodError, pod_violations, require_safe_pod
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import parse_sandbox_run, parse_training_job

SETTINGS = OperatorSettings()
LOCALHOST_SECCOMP = OperatorSettings(
    seccomp_profile_type="Localhost", seccomp_localhost_profile="skillgym/sandbox.json"
)
RUN = {"apiVersion": "skillgym.io/v1alpha1", "kind": "SandboxRun", "metadata": {"name": "r", "namespace": "ns"}}
TRAINING = {**RUN, "kind": "TrainingJob"}
WORKSPACE = {"target": "/app", "key": "in/app.tar.gz", "writable": True, "resultKey": "out/app.tar.gz"}


def sandbox_spec(**extra: Any) -> dict[str, Any]:
    return {"command": ["bash", "-lc", "make"], "outputPrefix": "sandbox/runs/r", "mounts": [WORKSPACE], **extra}


def sandbox_pod_spec(spec: dict[str, Any], settings: OperatorSettings = SETTINGS) -> dict[str, Any]:
    return builders.sandbox_pod(RUN, parse_sandbox_run(spec), "task:1", 1, settings)["spec"]


def training_pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    job = builders.training_job(TRAINING, parse_training_job({"datasetKey": "d", "baseModel": "m", **spec}), SETTINGS)
    return job["spec"]["template"]["spec"]


SANDBOX_VARIANTS = {
    "agent-writable-workspace": (sandbox_spec(), SETTINGS),
    "no-network": (sandbox_spec(), SETTINGS.model_copy(update={"store_egress_pod_labels": {}, "allow_dns": False})),
    "verifier-with-logs": (
        sandbox_spec(
            role="verifier",
            mounts=[
                {**WORKSPACE, "key": "in/copy.tar.gz"},
                {"target": "/tests", "key": "in/tests.tar.gz"},
                {"target": "/logs", "writable": True, "resultKey": "out/logs.tar.gz"},
            ],
        ),
        SETTINGS,
    ),
    "stdin-read-only-mounts": (
        sandbox_spec(stdinKey="in/stdin", mounts=[{"target": "/solution", "key": "in/s.tar.gz"}]),
        SETTINGS,
    ),
    "no-mounts-workdir-volume": (sandbox_spec(mounts=[], workdir="/work"), SETTINGS),
    "gvisor-service-account": (
        sandbox_spec(),
        SETTINGS.model_copy(update={"runtime_class_name": "gvisor", "sandbox_service_account": "sandbox"}),
    ),
    "localhost-seccomp": (sandbox_spec(), LOCALHOST_SECCOMP),
}


@pytest.mark.parametrize("variant", list(SANDBOX_VARIANTS))
def test_every_sandbox_pod_follows_the_policy(variant: str) -> None:
    spec, settings = SANDBOX_VARIANTS[variant]
    assert pod_violations(sandbox_pod_spec(spec, settings)) == []


@pytest.mark.parametrize(
    "spec",
    [{"gpus": 8, "nodes": 4}, {"gpus": 0}, {"gpus": 1, "resources": {"scratch": "50Gi"}}],
    ids=["multi-node-gpu", "cpu-only", "small-scratch"],
)
def test_every_training_pod_follows_the_policy(spec: dict[str, Any]) -> None:
    assert pod_violations(training_pod_spec(spec)) == []


def test_image_build_pod_breaks_only_the_rules_kaniko_needs() -> None:
    build = parse_sandbox_run(sandbox_spec(build={"contextKey": "ctx.tar.gz"})).build
    assert build is not None
    pod = builders.kaniko_build_job(build, "ns", SETTINGS)["spec"]["template"]["spec"]
    # Kaniko unpacks the base image into its own root and sets ownership: root, writable root,
    # file-ownership capabilities. Everything else (and the fetching container) follows the policy.
    assert pod_violations(pod) == [
        "container kaniko: runAsNonRoot is not true",
        "container kaniko: runAsUser is 0 (root)",
        "container kaniko: runAsGroup is 0 (root)",
        f"container kaniko: capabilities added: {', '.join(KANIKO_CAPABILITIES)}",
        "container kaniko: readOnlyRootFilesystem is not true",
    ]
    assert pod_violations({**pod, "containers": []}) == []


def test_localhost_seccomp_reaches_pod_and_containers() -> None:
    pod = sandbox_pod_spec(sandbox_spec(), LOCALHOST_SECCOMP)
    profile = {"type": "Localhost", "localhostProfile": "skillgym/sandbox.json"}
    assert pod["securityContext"]["seccompProfile"] == profile
    assert all(c["securityContext"]["seccompProfile"] == profile for c in [*pod["initContainers"], *pod["containers"]])
    with pytest.raises(ValueError, match="seccomp_localhost_profile"):
        OperatorSettings(seccomp_profile_type="Localhost")


def _container(pod: dict[str, Any]) -> dict[str, Any]:
    return pod["containers"][0]


def _security(pod: dict[str, Any]) -> dict[str, Any]:
    return _container(pod)["securityContext"]


def _drop_seccomp(pod: dict[str, Any]) -> None:
    del pod["securityContext"]["seccompProfile"]
    for container in [*pod["initContainers"], *pod["containers"]]:
        del container["securityContext"]["seccompProfile"]


BREAKAGES: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "hostPath": (lambda p: p["volumes"].append({"name": "node", "hostPath": {"path": "/"}}), "volume node: hostPath"),
    "root-uid": (lambda p: _security(p).update(runAsUser=0), "container run: runAsUser is 0 (root)"),
    "root-gid": (lambda p: _security(p).update(runAsGroup=0), "container run: runAsGroup is 0 (root)"),
    "unset-uid": (
        lambda p: [p["securityContext"].pop("runAsUser"), _security(p).pop("runAsUser")],
        "container run: runAsUser is unset",
    ),
    "runAsNonRoot-false": (
        lambda p: _security(p).update(runAsNonRoot=False),
        "container run: runAsNonRoot is not true",
    ),
    "missing-seccomp": (_drop_seccomp, "container run: no seccompProfile"),
    "unconfined-seccomp": (
        lambda p: _security(p).update(seccompProfile={"type": "Unconfined"}),
        "container run: seccompProfile is Unconfined",
    ),
    "token-automount": (lambda p: p.pop("automountServiceAccountToken"), "automountServiceAccountToken is not false"),
    "token-automount-true": (
        lambda p: p.update(automountServiceAccountToken=True),
        "automountServiceAccountToken is not false",
    ),
    "service-links": (lambda p: p.pop("enableServiceLinks"), "enableServiceLinks is not false"),
    "privileged": (lambda p: _security(p).update(privileged=True), "container run: privileged is true"),
    "added-caps": (
        lambda p: _security(p).update(capabilities={"drop": ["ALL"], "add": ["SYS_ADMIN"]}),
        "container run: capabilities added: SYS_ADMIN",
    ),
    "caps-kept": (lambda p: _security(p).pop("capabilities"), "container run: capabilities are not all dropped"),
    "writable-root": (
        lambda p: _security(p).update(readOnlyRootFilesystem=False),
        "container run: readOnlyRootFilesystem is not true",
    ),
    "privilege-escalation": (
        lambda p: _security(p).pop("allowPrivilegeEscalation"),
        "container run: allowPrivilegeEscalation is not false",
    ),
    "hostNetwork": (lambda p: p.update(hostNetwork=True), "hostNetwork is true"),
    "hostPID": (lambda p: p.update(hostPID=True), "hostPID is true"),
    "hostIPC": (lambda p: p.update(hostIPC=True), "hostIPC is true"),
    "shared-pids": (lambda p: p.update(shareProcessNamespace=True), "shareProcessNamespace is true"),
    "unmasked-proc": (lambda p: _security(p).update(procMount="Unmasked"), "container run: procMount is Unmasked"),
    "unbounded-emptyDir": (
        lambda p: p["volumes"].append({"name": "big", "emptyDir": {}}),
        "volume big: emptyDir without sizeLimit",
    ),
    "hostPort": (
        lambda p: _container(p).update(ports=[{"containerPort": 80, "hostPort": 80}]),
        "container run: hostPort 80",
    ),
    "root-fsGroup": (lambda p: p["securityContext"].update(fsGroup=0), "fsGroup is 0 (root)"),
    "root-init-container": (
        lambda p: p["initContainers"][0]["securityContext"].update(runAsUser=0),
        "container fetch: runAsUser is 0 (root)",
    ),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_each_broken_rule_is_reported(breakage: str) -> None:
    pod = copy.deepcopy(sandbox_pod_spec(sandbox_spec()))
    break_rule, expected = BREAKAGES[breakage]
    break_rule(pod)
    assert expected in pod_violations(pod)
    with pytest.raises(UnsafePodError) as info:
        require_safe_pod(pod)
    assert info.value.reason == "unsafe_pod" and expected in info.value.details["violations"]


def test_an_empty_pod_spec_breaks_the_pod_level_rules() -> None:
    assert pod_violations({"containers": [{"name": "c"}]}) == [
        "automountServiceAccountToken is not false",
        "enableServiceLinks is not false",
        "container c: runAsNonRoot is not true",
        "container c: runAsUser is unset",
        "container c: runAsGroup is unset",
        "container c: allowPrivilegeEscalation is not false",
        "container c: capabilities are not all dropped",
        "container c: readOnlyRootFilesystem is not true",
        "container c: no seccompProfile",
    ]


def test_pod_level_security_context_is_inherited() -> None:
    pod = copy.deepcopy(sandbox_pod_spec(sandbox_spec()))
    for container in [*pod["initContainers"], *pod["containers"]]:
        for field in ("runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile"):
            del container["securityContext"][field]
    assert pod_violations(pod) == []
