"""The chart publishes the event contracts: a ConfigMap with every schema and the AsyncAPI
document (the chart's copies kept equal to the generated ones), the content mode in the shared
config, and a hook Job that registers each schema when a schema registry is configured."""

from __future__ import annotations

import json
from typing import Any

import helm_python as helm
import pytest
from skillgym_core.contracts.schemas import artifacts, generated_schemas

from tests.charts.test_chart import CHART, by_kind, load_values, render

CHART_FILES = CHART / "files" / "events" / "v1"
REGISTRY = load_values(CHART / "ci" / "event-schemas-values.yaml")


def test_the_charts_copies_are_the_generated_contracts() -> None:
    assert sorted(p.name for p in CHART_FILES.iterdir()) == sorted(artifacts()), (
        "regenerate them: skillgym events schemas --out charts/skillgym/files/events/v1"
    )
    for name, text in artifacts().items():
        assert (CHART_FILES / name).read_text() == text, f"{name}: skillgym events schemas --out {CHART_FILES}"


def test_a_configmap_holds_every_schema_and_the_asyncapi_document() -> None:
    docs = render({})
    data = by_kind(docs, "ConfigMap")["sg-skillgym-event-schemas"]["data"]
    assert data == artifacts()
    assert by_kind(docs, "ConfigMap")["sg-skillgym-config"]["data"]["SKILLGYM_EVENT_MODE"] == "binary"
    assert "sg-skillgym-schema-registration" not in by_kind(docs, "Job")
    assert "sg-skillgym-event-schemas" not in by_kind(render({"events": {"schemas": {"configMap": False}}}), "ConfigMap")


def hook(doc: dict[str, Any]) -> list[str]:
    return str(doc["metadata"].get("annotations", {}).get("helm.sh/hook", "")).split(",")


def test_with_a_registry_a_hook_job_registers_each_schema_under_its_subject() -> None:
    docs = render(REGISTRY)
    assert by_kind(docs, "ConfigMap")["sg-skillgym-config"]["data"]["SKILLGYM_EVENT_MODE"] == "structured"
    requests = by_kind(docs, "ConfigMap")["sg-skillgym-schema-registration"]
    job = by_kind(docs, "Job")["sg-skillgym-schema-registration"]
    assert hook(requests) == hook(job) == ["post-install", "post-upgrade"]
    assert int(requests["metadata"]["annotations"]["helm.sh/hook-weight"]) < int(job["metadata"]["annotations"]["helm.sh/hook-weight"])

    expected = {f"prod.{name.removesuffix('.schema.json')}-value.json": schema for name, schema in generated_schemas().items()}
    assert set(requests["data"]) == set(expected)
    for subject_file, schema in expected.items():
        body = json.loads(requests["data"][subject_file])
        assert body["schemaType"] == "JSON"
        assert json.loads(body["schema"]) == schema

    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert {"name": "SCHEMA_REGISTRY_URL", "value": "http://schema-registry.kafka.svc:8081"} in container["env"]
    assert "/subjects/$subject/versions" in container["args"][0]
    assert pod["volumes"][0]["configMap"]["name"] == "sg-skillgym-schema-registration"
    assert job["spec"]["backoffLimit"] == 2


@pytest.mark.parametrize("bad", [{"mode": "avro"}, {"schemas": {"configMap": True, "registry": {"url": "kafka:8081"}}}])
def test_the_values_schema_rejects_what_the_chart_cannot_do(bad: dict[str, Any]) -> None:
    with helm.Chart.load(str(CHART)) as chart, pytest.raises(helm.HelmValuesError):
        chart.render({"events": bad}, name="sg", namespace="skillgym")
