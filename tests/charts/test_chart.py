"""The Helm chart lints, renders offline for every values file, and every manifest validates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

CHART = Path(__file__).resolve().parents[2] / "charts" / "skillgym"
VALUES_FILES = sorted((CHART / "ci").glob("*.yaml"))
KUBE_VERSION = "1.30"
# Kinds served by add-ons (Prometheus Operator, KEDA, Strimzi), not by Kubernetes itself.
ADDON_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("keda.sh/v1alpha1", "ScaledObject"),
    ("kafka.strimzi.io/v1", "KafkaTopic"),
}
TOPICS = [
    "skill-ingested", "env-built", "env-reviewed", "env-feedback",
    "env-validated", "trajectory-verified", "hardening-requested", "training-completed",
]  # fmt: skip


def load_values(path: Path | None) -> dict[str, Any]:
    return yaml.safe_load(path.read_text()) if path else {}


def render(values: dict[str, Any]) -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        manifests = chart.render(values, name="sg", namespace="skillgym", is_install=True)
    docs = []
    for path, text in sorted(manifests.items()):
        if path.endswith(".txt"):
            continue
        docs.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return docs


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


@pytest.fixture(params=[None, *VALUES_FILES], ids=["default", *(p.stem for p in VALUES_FILES)])
def values(request: pytest.FixtureRequest) -> dict[str, Any]:
    return load_values(request.param)


def test_chart_lints_strictly(values: dict[str, Any]) -> None:
    report = helm.lint(str(CHART), values, strict=True, kube_version=f"v{KUBE_VERSION}.0")
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_every_manifest_validates_strictly(values: dict[str, Any], tmp_path: Path) -> None:
    docs = render(values)
    assert docs
    for index, doc in enumerate(docs):
        if (doc["apiVersion"], doc["kind"]) in ADDON_KINDS:
            continue
        kubernetes_validate.validate(doc, KUBE_VERSION, strict=True)
        (tmp_path / f"{index:03d}-{doc['kind']}.yaml").write_text(yaml.safe_dump(doc))
    # The command-line validator too, exactly as an operator would run it.
    files = sorted(str(p) for p in tmp_path.glob("*.yaml"))
    result = subprocess.run(
        [str(Path(sys.executable).parent / "kubernetes-validate"), "--strict", "--quiet", "-k", KUBE_VERSION, *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    unknown = {(d["apiVersion"], d["kind"]) for d in docs} - ADDON_KINDS
    assert all(kind for _, kind in unknown)


def test_crds_validate_strictly() -> None:
    crds = sorted((CHART / "crds").glob("*.yaml"))
    assert {p.name for p in crds} == {"sandboxruns.skillgym.io.yaml", "trainingjobs.skillgym.io.yaml"}
    for path in crds:
        crd = yaml.safe_load(path.read_text())
        kubernetes_validate.validate(crd, KUBE_VERSION, strict=True)
        version = crd["spec"]["versions"][0]
        assert version["subresources"] == {"status": {}}
        assert version["additionalPrinterColumns"]
        assert version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["phase"]["enum"]


def test_schema_violation_is_rejected() -> None:
    with helm.Chart.load(str(CHART)) as chart:
        with pytest.raises(helm.HelmValuesError, match="topics/mode"):
            chart.validate_schema({"topics": {"mode": "zookeeper"}})
        with pytest.raises(helm.HelmValuesError):
            chart.render({"services": {"builder": {"replicas": -1}}}, name="sg", namespace="skillgym")
        with pytest.raises(helm.HelmValuesError):
            chart.render({"services": {"scheduler": {}}}, name="sg", namespace="skillgym")
        for path in VALUES_FILES:
            chart.validate_schema(load_values(path))


def test_services_run_skillgym_serve_with_probes_metrics_and_wiring() -> None:
    docs = render({})
    deployments = by_kind(docs, "Deployment")
    for name in ("builder", "reviewer", "validator", "sampler", "trainer"):
        container = deployments[f"sg-skillgym-{name}"]["spec"]["template"]["spec"]["containers"][0]
        assert container["args"] == ["serve", name]
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert {ref.get("configMapRef", ref.get("secretRef"))["name"] for ref in container["envFrom"]} == {
            "sg-skillgym-config",
            "sg-skillgym-secrets",
        }
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
    config = by_kind(docs, "ConfigMap")["sg-skillgym-config"]["data"]
    assert config["SKILLGYM_BUS"] == "kafka" and config["SKILLGYM_STORE"] == "s3"
    assert config["SKILLGYM_SANDBOX"] == "kubernetes"
    for key in ("SKILLGYM_KAFKA_BOOTSTRAP", "SKILLGYM_S3_ENDPOINT", "SKILLGYM_S3_BUCKET"):
        assert config[key]
    secret = by_kind(docs, "Secret")["sg-skillgym-secrets"]["stringData"]
    assert {"SKILLGYM_S3_ACCESS_KEY", "SKILLGYM_S3_SECRET_KEY"} <= set(secret)
    assert set(by_kind(docs, "HorizontalPodAutoscaler")) == {
        f"sg-skillgym-{n}" for n in ("builder", "reviewer", "validator", "sampler")
    }


def test_the_env_server_is_off_by_default_and_one_stateful_replica_when_on() -> None:
    assert not any("envserver" in doc["metadata"]["name"] for doc in render({}))
    docs = render(load_values(CHART / "ci" / "monitoring-values.yaml"))
    deployment = by_kind(docs, "Deployment")["sg-skillgym-envserver"]
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"]["type"] == "Recreate"
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"][:1] == ["serve-env"] and container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    env = {item["name"]: item for item in container["env"]}
    assert env["SKILLGYM_ENVSERVER_STATE_DIR"]["value"] == "/state"
    assert env["SKILLGYM_ENVSERVER_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "skillgym-envserver-token"
    state = next(v for v in pod["volumes"] if v["name"] == "state")
    assert state["persistentVolumeClaim"]["claimName"] in by_kind(docs, "PersistentVolumeClaim")
    service = by_kind(docs, "Service")["sg-skillgym-envserver"]
    assert service["metadata"]["labels"]["skillgym.io/metrics"] == "true"
    assert service["spec"]["ports"][0]["targetPort"] == "http"


def test_operator_rbac_is_namespaced_and_least_privilege() -> None:
    docs = render({})
    assert not by_kind(docs, "ClusterRole") and not by_kind(docs, "ClusterRoleBinding")
    role = by_kind(docs, "Role")["sg-skillgym-operator"]
    verbs = {
        (group, resource): set(rule["verbs"])
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert "*" not in set().union(*verbs.values())
    assert verbs[("", "pods")] == {"get", "list", "watch", "create", "delete"}
    assert verbs[("skillgym.io", "sandboxruns")] == {"get", "list", "watch"}  # no finalizer or record on runs
    assert verbs[("skillgym.io", "sandboxruns/status")] == {"patch"}
    assert verbs[("", "events")] == {"create"}
    assert "secrets" not in {resource for _, resource in verbs}
    container = by_kind(docs, "Deployment")["sg-skillgym-operator"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:4] == ["kopf", "run", "-m", "skillgym_operator"]


@pytest.mark.parametrize(
    ("values", "rules"),
    [
        ({}, {"sandboxruns": {"create", "list", "watch", "delete"}, "trainingjobs": {"create"}}),
        ({"config": {"sandbox": "local"}, "services": {"trainer": {"kubernetesApi": True}}},
         {"trainingjobs": {"create"}}),
        ({"config": {"sandbox": "local"}}, {}),
    ],
    ids=["kubernetes-sandbox", "trainer-api-only", "no-api"],
)
def test_services_role_grants_only_what_their_api_clients_call(
    values: dict[str, Any], rules: dict[str, set[str]]
) -> None:
    roles = {name: role for name, role in by_kind(render(values), "Role").items() if not name.endswith("-operator")}
    granted = {
        resource: set(rule["verbs"])
        for role in roles.values()
        for rule in role["rules"]
        for resource in rule["resources"]
    }
    assert granted == rules
    assert bool(roles) == bool(rules)


def test_topics_job_creates_every_topic_and_dead_letter_topic() -> None:
    job = next(iter(by_kind(render({}), "Job").values()))
    script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    for topic in TOPICS:
        assert f" {topic} {topic}.dlq " in f" {script.split('for topic in ')[1].split(';')[0]} "


def test_strimzi_mode_renders_kafka_topics() -> None:
    docs = render(load_values(CHART / "ci" / "keda-strimzi-values.yaml"))
    topics = {doc["spec"]["topicName"] for doc in docs if doc["kind"] == "KafkaTopic"}
    assert topics == set(TOPICS) | {f"{t}.dlq" for t in TOPICS}
    assert not by_kind(docs, "Job")
    scaled = by_kind(docs, "ScaledObject")["sg-skillgym-sampler"]
    assert scaled["spec"]["triggers"][0]["metadata"]["consumerGroup"] == "skillgym-sampler"
    assert "sg-skillgym-sampler" not in by_kind(docs, "HorizontalPodAutoscaler")


def test_monitoring_objects_carry_the_shipped_rules_and_dashboards() -> None:
    docs = render(load_values(CHART / "ci" / "monitoring-values.yaml"))
    rule = next(d for d in docs if d["kind"] == "PrometheusRule")
    assert rule["spec"] == yaml.safe_load((CHART / "rules" / "skillgym-alerts.yaml").read_text())
    dashboards = [d for d in docs if d["kind"] == "ConfigMap" and "dashboard" in d["metadata"]["name"]]
    assert len(dashboards) == len(list((CHART / "dashboards").glob("*.json")))
    for cm in dashboards:
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        (payload,) = cm["data"].values()
        assert json.loads(payload)["uid"].startswith("skillgym-")
    monitor = next(d for d in docs if d["kind"] == "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"


POD_TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "Job"}


def pod_templates(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``kind/name`` -> pod spec of every workload the chart renders."""
    return {
        f"{doc['kind']}/{doc['metadata']['name']}": doc["spec"]["template"]["spec"]
        for doc in docs
        if doc["kind"] in POD_TEMPLATE_KINDS
    }


def token_mounted(pod: dict[str, Any], docs: list[dict[str, Any]]) -> bool:
    """Whether Kubernetes mounts a service account token: the pod's setting, else its account's."""
    if "automountServiceAccountToken" in pod:
        return bool(pod["automountServiceAccountToken"])
    account = by_kind(docs, "ServiceAccount").get(pod.get("serviceAccountName", "default"), {})
    return bool(account.get("automountServiceAccountToken", True))


def test_every_pod_template_runs_confined_and_non_root(values: dict[str, Any]) -> None:
    templates = pod_templates(render(values))
    assert templates
    for workload, pod in templates.items():
        assert not any(pod.get(f) for f in ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace")), workload
        assert not any("hostPath" in volume for volume in pod.get("volumes", [])), workload
        assert pod.get("enableServiceLinks") is False, workload
        pod_security = pod.get("securityContext") or {}
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            where = f"{workload}/{container['name']}"
            security = container.get("securityContext") or {}
            assert security.get("runAsNonRoot", pod_security.get("runAsNonRoot")) is True, where
            assert security.get("runAsUser", pod_security.get("runAsUser")) not in (None, 0), where
            assert security.get("allowPrivilegeEscalation") is False, where
            assert not security.get("privileged"), where
            assert "ALL" in security.get("capabilities", {}).get("drop", []), where
            assert not security.get("capabilities", {}).get("add"), where
            assert security.get("readOnlyRootFilesystem") is True, where
            seccomp = security.get("seccompProfile", pod_security.get("seccompProfile")) or {}
            assert seccomp.get("type") in ("RuntimeDefault", "Localhost"), where


def test_service_account_tokens_are_mounted_only_where_the_api_is_needed(values: dict[str, Any]) -> None:
    docs = render(values)
    submits_sandbox_runs = (values.get("config") or {}).get("sandbox", "kubernetes") == "kubernetes"
    mounted = {workload for workload, pod in pod_templates(docs).items() if token_mounted(pod, docs)}
    expected = {f"Deployment/{name}" for name in by_kind(docs, "Deployment") if name.endswith("-operator")}
    if submits_sandbox_runs:
        expected |= {f"Deployment/{name}" for name in by_kind(docs, "Deployment")
                     if not name.endswith(("-operator", "-registry"))}  # fmt: skip
    assert mounted == expected
    assert all(account["automountServiceAccountToken"] is False for account in by_kind(docs, "ServiceAccount").values())


def test_a_service_may_opt_into_the_api_without_the_kubernetes_sandbox() -> None:
    docs = render({"config": {"sandbox": "local"}, "services": {"trainer": {"kubernetesApi": True}}})
    templates = pod_templates(docs)
    mounted = {workload for workload, pod in templates.items() if token_mounted(pod, docs)}
    assert mounted == {"Deployment/sg-skillgym-operator", "Deployment/sg-skillgym-trainer"}


def test_operator_hands_workload_security_to_its_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillgym_operator import builders
    from skillgym_operator.builders.policy import pod_violations
    from skillgym_operator.settings import OperatorSettings
    from skillgym_operator.spec import parse_sandbox_run

    docs = render(load_values(CHART / "ci" / "monitoring-values.yaml"))
    container = by_kind(docs, "Deployment")["sg-skillgym-operator"]["spec"]["template"]["spec"]["containers"][0]
    for variable in container["env"]:
        if variable["name"].startswith("SKILLGYM_OPERATOR_") and "value" in variable:
            monkeypatch.setenv(variable["name"], variable["value"])
    settings = OperatorSettings()
    assert (settings.run_as_user, settings.run_as_group) == (2000000, 2000000)
    profile = {"type": "Localhost", "localhostProfile": "profiles/skillgym-sandbox.json"}
    assert settings.seccomp_profile() == profile
    run = {"apiVersion": "skillgym.io/v1alpha1", "kind": "SandboxRun", "metadata": {"name": "r", "namespace": "n"}}
    pod = builders.sandbox_pod(run, parse_sandbox_run({"command": ["true"], "outputPrefix": "o"}), "i", 1, settings)
    assert pod["spec"]["securityContext"]["seccompProfile"] == profile
    assert pod_violations(pod["spec"]) == []
    assert settings.public_network and "169.254.0.0/16" in settings.public_egress_blocked


SAFE_POD = {"runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001, "seccompProfile": {"type": "RuntimeDefault"}}
SAFE_CONTAINER = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}


@pytest.mark.parametrize(
    ("unsafe", "where"),
    [
        ({"podSecurityContext": SAFE_POD | {"runAsNonRoot": False}}, "/podSecurityContext/runAsNonRoot"),
        ({"podSecurityContext": SAFE_POD | {"runAsUser": 0}}, "/podSecurityContext/runAsUser"),
        ({"podSecurityContext": SAFE_POD | {"seccompProfile": {"type": "Unconfined"}}}, "/podSecurityContext/seccompProfile/type"),
        ({"securityContext": SAFE_CONTAINER | {"allowPrivilegeEscalation": True}}, "/securityContext/allowPrivilegeEscalation"),
        ({"securityContext": SAFE_CONTAINER | {"privileged": True}}, "/securityContext/privileged"),
        ({"securityContext": SAFE_CONTAINER | {"readOnlyRootFilesystem": False}}, "/securityContext/readOnlyRootFilesystem"),
        ({"securityContext": SAFE_CONTAINER | {"capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]}}}, "/securityContext/capabilities/add"),
        ({"securityContext": SAFE_CONTAINER | {"capabilities": {"drop": ["NET_RAW"]}}}, "/securityContext/capabilities/drop"),
        ({"operator": {"enabled": True, "workloadSecurity": {"runAsUser": 0}}}, "/operator/workloadSecurity/runAsUser"),
        ({"operator": {"enabled": True, "workloadSecurity": {"seccompProfile": {"type": "Localhost"}}}},
         "/operator/workloadSecurity/seccompProfile/localhostProfile"),
    ],
)  # fmt: skip
def test_schema_rejects_unsafe_security_values(unsafe: dict[str, Any], where: str) -> None:
    with helm.Chart.load(str(CHART)) as chart, pytest.raises(helm.HelmValuesError, match=f"'{where}'"):
        chart.render(unsafe, name="sg", namespace="skillgym")


def test_schema_accepts_a_localhost_seccomp_profile() -> None:
    localhost = {"type": "Localhost", "localhostProfile": "profiles/skillgym.json"}
    docs = render({"podSecurityContext": SAFE_POD | {"seccompProfile": localhost}})
    assert all(pod["securityContext"]["seccompProfile"] == localhost for pod in pod_templates(docs).values())


def test_operator_replicas_elect_a_leader_through_a_lease_they_alone_may_update() -> None:
    docs = render({"operator": {"replicas": 2}})
    deployment = by_kind(docs, "Deployment")["sg-skillgym-operator"]
    assert deployment["spec"]["replicas"] == 2
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["SKILLGYM_OPERATOR_LEADER_ELECTION"]["value"] == "true"
    assert env["SKILLGYM_OPERATOR_LEASE_NAME"]["value"] == "sg-skillgym-operator"
    assert env["SKILLGYM_OPERATOR_IDENTITY"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["SKILLGYM_OPERATOR_STANDBY_HEALTH_PORT"]["value"] == "8080"
    rules = [r for r in by_kind(docs, "Role")["sg-skillgym-operator"]["rules"] if "leases" in r["resources"]]
    assert {(tuple(r["verbs"]), tuple(r.get("resourceNames", ()))) for r in rules} == {
        (("create",), ()), (("get", "update"), ("sg-skillgym-operator",))}


def test_task_images_are_built_into_the_deployed_registry_or_one_of_your_own() -> None:
    assert "sg-skillgym-registry" not in by_kind(render({}), "Deployment")  # off by default
    docs = render({"config": {"sandbox": "kubernetes"}, "imageBuilds": {"enabled": True}})
    registry = by_kind(docs, "Deployment")["sg-skillgym-registry"]["spec"]["template"]["spec"]
    assert registry["containers"][0]["ports"][0]["containerPort"] == 5000 and registry["enableServiceLinks"] is False
    assert by_kind(docs, "Service")["sg-skillgym-registry"]["spec"]["ports"][0]["port"] == 5000
    assert by_kind(docs, "ConfigMap")["sg-skillgym-config"]["data"]["SKILLGYM_K8S_BUILD_IMAGES"] == "true"
    operator = by_kind(docs, "Deployment")["sg-skillgym-operator"]["spec"]["template"]["spec"]["containers"][0]
    env = {item["name"]: item.get("value") for item in operator["env"]}
    assert env["SKILLGYM_OPERATOR_BUILD_REGISTRY"] == "sg-skillgym-registry.skillgym.svc.cluster.local:5000"
    assert env["SKILLGYM_OPERATOR_BUILD_REGISTRY_INSECURE"] == "true"
    own = render({"imageBuilds": {"enabled": True, "registry": "registry.example.com/ml/skillgym", "insecure": False}})
    assert "sg-skillgym-registry" not in by_kind(own, "Deployment")
    env = {item["name"]: item.get("value") for item in
           by_kind(own, "Deployment")["sg-skillgym-operator"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["SKILLGYM_OPERATOR_BUILD_REGISTRY"] == "registry.example.com/ml/skillgym"
    with pytest.raises(Exception, match="registry"):
        render({"imageBuilds": {"registry": "not a registry!"}})
