"""The chart on a real API server: its CRDs and the add-ons' own published CRDs (prometheus-operator,
KEDA, Strimzi; see scripts/kubernetes/fetch-crds.sh) become Established, every values set applies
with server-side apply and reads back as rendered, the CRDs' schemas refuse bad custom resources
as the operator's spec models do, and schema and models agree field by field."""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import DynamicApiError
from pydantic import BaseModel
from skillgym_operator.spec import (
    InvalidSpecError,
    LimitsSpec,
    SandboxRunSpec,
    TrainingJobSpec,
    parse_sandbox_run,
    parse_training_job,
)

from tests.charts.test_chart import CHART, VALUES_FILES, load_values
from tests.support.kube_cluster import INSTALL_HINT, KUBE_DIR, KubeCluster
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.deferred_service]

ADDON_CRD_DIR = KUBE_DIR / "crds"
ADDON_CRDS = {
    "servicemonitors.monitoring.coreos.com",
    "prometheusrules.monitoring.coreos.com",
    "scaledobjects.keda.sh",
    "kafkatopics.kafka.strimzi.io",
}
FIELD_MANAGER = "skillgym-test"
# Unknown fields are refused instead of silently pruned.
STRICT = [("fieldValidation", "Strict")]
GROUP_VERSION = "skillgym.io/v1alpha1"
# Zero values that built-in kinds' Go types leave out of what they store (omitempty).
OMITTED_WHEN_EMPTY = ("", False, 0, [], {})


def yaml_documents(paths: list[Path]) -> list[dict[str, Any]]:
    return [doc for path in paths for doc in yaml.safe_load_all(path.read_text()) if doc]


def established(crd: dict[str, Any]) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


@pytest.fixture(scope="module")
def dynamic(kube: KubeCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DynamicClient]:
    """A dynamic client once the chart's and the add-ons' CRDs are all Established."""
    addon_crds = yaml_documents(sorted(ADDON_CRD_DIR.glob("*.yaml")))
    missing = ADDON_CRDS - {crd["metadata"]["name"] for crd in addon_crds}
    assert not missing, f"{sorted(missing)} not in {ADDON_CRD_DIR}; {INSTALL_HINT}"
    crds = yaml_documents(sorted((CHART / "crds").glob("*.yaml"))) + addon_crds
    with kube.api_client() as client:
        bootstrap = DynamicClient(client, cache_file=str(tmp_path_factory.mktemp("discovery") / "before.json"))
        definitions = bootstrap.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
        for crd in crds:
            bootstrap.server_side_apply(definitions, body=crd, field_manager=FIELD_MANAGER, force_conflicts=True)
        names = [crd["metadata"]["name"] for crd in crds]
        wait_for(
            lambda: all(established(definitions.get(name=name).to_dict()) for name in names),
            30,
            what="CRDs established",
        )
        # Discovery made after the CRDs are served, so that it knows their kinds.
        yield DynamicClient(client, cache_file=str(tmp_path_factory.mktemp("discovery") / "after.json"))


def render(values: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        manifests = chart.render(values, name="sg", namespace=namespace, is_install=True)
    return [
        doc
        for path, text in sorted(manifests.items())
        if not path.endswith(".txt")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def resource_of(dynamic: DynamicClient, doc: dict[str, Any], namespace: str) -> tuple[Any, str | None]:
    """The API resource serving ``doc`` and the namespace it goes in (none if cluster-scoped)."""
    resource = dynamic.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    return resource, namespace if resource.namespaced else None


def apply(dynamic: DynamicClient, doc: dict[str, Any], namespace: str, **options: Any) -> None:
    resource, where = resource_of(dynamic, doc, namespace)
    dynamic.server_side_apply(
        resource, body=doc, namespace=where, field_manager=FIELD_MANAGER, force_conflicts=True,
        query_params=list(STRICT), **options,
    )  # fmt: skip


def as_stored(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as the API server keeps it: a Secret's write-only stringData lands in data."""
    stored = copy.deepcopy(doc)
    if stored["kind"] == "Secret" and "stringData" in stored:
        encoded = {k: base64.b64encode(str(v).encode()).decode() for k, v in stored.pop("stringData").items()}
        stored["data"] = {**stored.get("data", {}), **encoded}
    return stored


def differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` lacks or changes what ``expected`` says (fields it adds, such as defaults, pass)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [d for key, value in expected.items() for d in differences(value, actual.get(key), f"{path}.{key}")]
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            d for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for d in differences(e, a, f"{path}[{i}]")
        ]
    if expected == actual or (actual is None and expected in OMITTED_WHEN_EMPTY):
        return []
    return [f"{path}: rendered {expected!r}, stored {actual!r}"]


@pytest.mark.parametrize("values_file", [None, *VALUES_FILES], ids=["default", *(p.stem for p in VALUES_FILES)])
def test_every_rendered_document_applies_server_side_and_reads_back(
    dynamic: DynamicClient, kube_namespace: str, values_file: Path | None
) -> None:
    docs = render(load_values(values_file), kube_namespace)
    assert docs
    refused = {}
    for doc in docs:
        try:
            apply(dynamic, doc, kube_namespace, dry_run="All")
        except DynamicApiError as exc:
            refused[f"{doc['kind']}/{doc['metadata']['name']}"] = exc.summary()
    assert refused == {}, "\n".join(f"{name}: {why}" for name, why in refused.items())
    for doc in docs:
        apply(dynamic, doc, kube_namespace)
    for doc in docs:
        resource, where = resource_of(dynamic, doc, kube_namespace)
        stored = resource.get(name=doc["metadata"]["name"], namespace=where).to_dict()
        assert stored["metadata"].get("namespace") == where
        assert differences(as_stored(doc), stored) == [], f"{doc['kind']}/{doc['metadata']['name']}"


def sandbox_run(**spec: Any) -> dict[str, Any]:
    return {"command": ["true"], "outputPrefix": "runs/r1"} | spec


def training_job(**spec: Any) -> dict[str, Any]:
    return {"datasetKey": "datasets/d1", "baseModel": "Qwen/Qwen2.5-0.5B"} | spec


def without(spec: dict[str, Any], field: str) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != field}


def create(dynamic: DynamicClient, kind: str, spec: dict[str, Any], namespace: str) -> dict[str, Any]:
    resource = dynamic.resources.get(api_version=GROUP_VERSION, kind=kind)
    body = {"apiVersion": GROUP_VERSION, "kind": kind, "metadata": {"name": "probe"}, "spec": spec}
    return dict(resource.create(body=body, namespace=namespace).to_dict())


PARSERS = {"SandboxRun": parse_sandbox_run, "TrainingJob": parse_training_job}


BAD_SPECS = [
    ("SandboxRun", without(sandbox_run(), "command"), "spec.command", "Required value"),
    ("SandboxRun", without(sandbox_run(), "outputPrefix"), "spec.outputPrefix", "Required value"),
    ("SandboxRun", sandbox_run(command=[]), "spec.command", "should have at least 1 items"),
    ("SandboxRun", sandbox_run(command="true"), "spec.command", "must be of type array"),
    ("SandboxRun", sandbox_run(limits={"memoryMb": "lots"}), "spec.limits.memoryMb", "must be of type integer"),
    ("SandboxRun", sandbox_run(limits={"memoryMb": 8}), "spec.limits.memoryMb", "greater than or equal to 16"),
    ("SandboxRun", sandbox_run(limits={"pids": -1}), "spec.limits.pids", "greater than or equal to 8"),
    ("SandboxRun", sandbox_run(limits={"wallSeconds": 0}), "spec.limits.wallSeconds", "should be greater than 0"),
    ("SandboxRun", sandbox_run(limits={"outputBytes": -1}), "spec.limits.outputBytes", "greater than or equal to 0"),
    ("SandboxRun", sandbox_run(timeoutSeconds=0), "spec.timeoutSeconds", "greater than or equal to 1"),
    ("SandboxRun", sandbox_run(maxAttempts=0), "spec.maxAttempts", "greater than or equal to 1"),
    ("SandboxRun", sandbox_run(role="admin"), "spec.role", 'Unsupported value: "admin"'),
    ("SandboxRun", sandbox_run(build={"dockerfile": "Dockerfile"}), "spec.build", "either contextKey or baseImage"),
    ("SandboxRun", sandbox_run(build={"contextKey": "k", "user": "a b"}), "spec.build.user", "should match"),
    ("SandboxRun", sandbox_run(network="everywhere"), "spec.network", "Unsupported value"),
    ("SandboxRun", sandbox_run(mounts=[{"target": "relative"}]), "spec.mounts[0].target", "should match '^/'"),
    ("SandboxRun", sandbox_run(mounts=[{"target": "/data"}, {"target": "/data"}]), "spec.mounts[1]",
     "Duplicate value"),
    ("SandboxRun", sandbox_run(env=[{"value": "x"}]), "spec.env[0].name", "Required value"),
    ("TrainingJob", training_job(nodes=0), "spec.nodes", "greater than or equal to 1"),
    ("TrainingJob", training_job(gpus=-1), "spec.gpus", "greater than or equal to 0"),
    ("TrainingJob", training_job(backoffLimit=-1), "spec.backoffLimit", "greater than or equal to 0"),
    ("TrainingJob", training_job(nodes="two"), "spec.nodes", "must be of type integer"),
    ("TrainingJob", without(training_job(), "datasetKey"), "spec.datasetKey", "Required value"),
    ("TrainingJob", training_job(resources={"scratch": "lots"}), "spec.resources.scratch", "should match"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "spec", "field", "message"),
    BAD_SPECS,
    ids=[re.sub(r"[^\w.\[\]]+", "-", f"{field} {message}").strip("-") for _, _, field, message in BAD_SPECS],
)
def test_the_api_server_refuses_a_bad_custom_resource_as_the_operator_would(
    dynamic: DynamicClient, kube_namespace: str, kind: str, spec: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(DynamicApiError) as refused:
        create(dynamic, kind, spec, kube_namespace)
    assert refused.value.status == 422
    assert f"{field}: " in refused.value.summary() and message in refused.value.summary(), refused.value.summary()
    with pytest.raises(InvalidSpecError):
        PARSERS[kind](spec)


def test_the_api_server_fills_in_the_defaults_the_operator_assumes(dynamic: DynamicClient, kube_namespace: str) -> None:
    submitted = sandbox_run(limits={}, build={"contextKey": "ctx.tar.gz"}, mounts=[{"target": "/data"}])
    stored = create(dynamic, "SandboxRun", submitted, kube_namespace)["spec"]
    assert set(stored) - set(submitted) == {"role", "workdir", "skillProvided", "network"}
    assert stored["limits"] == LimitsSpec().model_dump(by_alias=True)
    assert stored["build"]["dockerfile"] == "Dockerfile" and stored["mounts"][0]["writable"] is False
    assert parse_sandbox_run(stored) == parse_sandbox_run(submitted)

    submitted = training_job()
    stored = create(dynamic, "TrainingJob", submitted, kube_namespace)["spec"]
    assert set(stored) - set(submitted) == {"gpus", "nodes", "backoffLimit"}
    assert parse_training_job(stored) == parse_training_job(submitted)


# ---------------------------------------------------------------- schema and models agree

CONSTRAINTS = ("type", "minimum", "exclusiveMinimum", "minItems", "enum", "pattern")


def crd_spec_schema(kind: str) -> dict[str, Any]:
    crds = yaml_documents(sorted((CHART / "crds").glob("*.yaml")))
    (version,) = next(crd for crd in crds if crd["spec"]["names"]["kind"] == kind)["spec"]["versions"]
    return dict(version["schema"]["openAPIV3Schema"]["properties"]["spec"])


def walk(
    schema: dict[str, Any], definitions: dict[str, Any], path: str = "spec"
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ``path`` of a schema (a CRD's, or a pydantic model's JSON schema by alias) with its node;
    a model's references are resolved and its ``X | None`` read as ``X``."""
    while "$ref" in schema or "anyOf" in schema:
        rest = {key: value for key, value in schema.items() if key not in ("$ref", "anyOf")}
        if "$ref" in schema:
            schema = definitions[schema["$ref"].rsplit("/", 1)[1]] | rest
        else:
            (option,) = [option for option in schema["anyOf"] if option.get("type") != "null"]
            schema = option | rest
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from walk(sub, definitions, f"{path}.{name}")
    if "items" in schema:
        yield from walk(schema["items"], definitions, f"{path}[]")


def constraints(node: dict[str, Any]) -> dict[str, Any]:
    found = {key: node[key] for key in CONSTRAINTS if key in node}
    if found.get("exclusiveMinimum") is True:  # OpenAPI v3.0's flag on minimum is JSON Schema's bound
        found["exclusiveMinimum"] = found.pop("minimum")
    return found | {"fields": sorted(node.get("properties", {})), "required": sorted(node.get("required", []))}


@pytest.mark.parametrize(("kind", "model"), [("SandboxRun", SandboxRunSpec), ("TrainingJob", TrainingJobSpec)])
def test_the_crd_schema_and_the_operators_spec_model_agree(kind: str, model: type[BaseModel]) -> None:
    model_schema = model.model_json_schema(by_alias=True)
    crd_nodes = dict(walk(crd_spec_schema(kind), {}))
    model_nodes = dict(walk(model_schema, model_schema.get("$defs", {})))
    assert sorted(crd_nodes) == sorted(model_nodes)
    mismatches = {
        path: {"crd": constraints(node), "model": constraints(model_nodes[path])}
        for path, node in crd_nodes.items()
        if constraints(node) != constraints(model_nodes[path])
    }
    assert mismatches == {}
    # A default the API server fills in is the one the operator assumes.
    wrong_defaults = {
        path: (node["default"], model_nodes[path].get("default", "<none>"))
        for path, node in crd_nodes.items()
        if "default" in node and node["default"] != model_nodes[path].get("default")
    }
    assert wrong_defaults == {}
