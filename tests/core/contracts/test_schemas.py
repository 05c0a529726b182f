"""The published JSON Schemas: shipped with the package as generated from the models, valid
draft 2020-12, identified by what events name as their dataschema, and open to added fields."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from skillgym_core.contracts.cloudevents import schema_id, to_structured
from skillgym_core.contracts.events import Envelope, Payload, kind_of, payload_types
from skillgym_core.contracts.schemas import (
    ASYNCAPI_FILE,
    artifacts,
    generated_schemas,
    load_schemas,
    payload_schema,
    published_dir,
    validator_for,
    write_artifacts,
)

from tests.core.test_contracts import SAMPLES

REGENERATE = "regenerate them: skillgym events schemas --out shared/skillgym_core/contracts/schemas/v1"


def test_the_shipped_files_are_the_generated_ones() -> None:
    shipped = published_dir()
    names = sorted(entry.name for entry in shipped.iterdir())
    assert names == sorted(artifacts()), REGENERATE
    for name, text in artifacts().items():
        assert shipped.joinpath(name).read_text() == text, f"{name} differs from the models; {REGENERATE}"


def test_generating_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    write_artifacts(tmp_path / "a")
    write_artifacts(tmp_path / "b")
    for path in sorted((tmp_path / "a").iterdir()):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes()
    assert {p.name for p in (tmp_path / "a").iterdir()} == {*generated_schemas(), ASYNCAPI_FILE}


@pytest.mark.parametrize("model", payload_types(), ids=lambda m: m.__name__)
def test_each_schema_is_draft_2020_12_and_named_by_the_events_dataschema(model: type[Payload]) -> None:
    schema = payload_schema(model)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == schema_id(kind_of(model)) == f"https://skillgym.io/schemas/events/v1/{model.topic}.schema.json"
    assert schema["required"][0] == "kind"
    assert "additionalProperties" not in schema


@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_every_sample_event_validates_against_the_schema_its_dataschema_names(payload: Payload) -> None:
    check = validator_for(load_schemas(published_dir()))
    event = to_structured(Envelope.wrap(payload, producer="tests", correlation_id="c"))
    assert check(event["dataschema"], event["data"]) == []


def test_the_schemas_catch_what_the_models_reject() -> None:
    check = validator_for(load_schemas(published_dir()))
    built = json.loads(SAMPLES[1].model_dump_json())
    dataschema = schema_id(SAMPLES[1].topic)
    assert check(dataschema, built | {"revision": "two"}) == ["revision: 'two' is not of type 'integer'"]
    assert check(dataschema, {k: v for k, v in built.items() if k != "task_id"}) == ["(root): 'task_id' is a required property"]
    assert check(dataschema, built | {"kind": "env-reviewed"}) == ["kind: 'env-built' was expected"]
    assert check(dataschema, built | {"added_later": True}) == []
    assert check("https://example.org/other.json", built) == ["no published schema has the id https://example.org/other.json"]
