"""The compatibility promise: the models may only add optional fields to the schemas published
for their major version, and a change that breaks it is reported by the field it breaks."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field
from skillgym_core.contracts import topics
from skillgym_core.contracts.compatibility import (
    IncompatibleSchemaError,
    breaking_changes,
    check_published,
    compare_schema_sets,
    raise_if_breaking,
)
from skillgym_core.contracts.events import EnvValidated, Payload, SkillIngested
from skillgym_core.contracts.schemas import generated_schemas, load_schemas, payload_schema, published_dir

PUBLISHED = load_schemas(published_dir())


def test_the_models_keep_the_promise_of_the_published_schemas() -> None:
    changes = check_published()
    assert not changes, (
        "payload models break the published v1 schemas; make the change additive and optional, or publish a new "
        "major version:\n" + "\n".join(map(str, changes))
    )


class BrokenSkillIngested(Payload):
    """skill-ingested as a careless edit would leave it: a field gone, one retyped, one new and
    required, an optional one made required."""

    topic: ClassVar[str] = topics.SKILL_INGESTED
    key_field: ClassVar[str] = "skill_id"
    kind: Literal["skill-ingested"] = "skill-ingested"
    skill_id: str
    record_key: str
    files_key: int
    owner: str
    category: str


def test_a_deliberately_broken_model_is_reported_by_the_fields_it_breaks() -> None:
    changes = breaking_changes(PUBLISHED["skill-ingested.schema.json"], payload_schema(BrokenSkillIngested),
                               "skill-ingested.schema.json")  # fmt: skip
    messages = sorted(map(str, changes))
    assert messages == [
        "skill-ingested.schema.json: field 'category' became required: older events lack it",
        "skill-ingested.schema.json: field 'category' changed type from null, string to string",
        "skill-ingested.schema.json: field 'files_key' changed type from string to integer",
        "skill-ingested.schema.json: field 'name' was removed",
        "skill-ingested.schema.json: field 'owner' is new and required: older events lack it",
    ]
    with pytest.raises(IncompatibleSchemaError) as caught:
        raise_if_breaking(changes)
    assert caught.value.reason == "incompatible_schema"
    assert caught.value.details["fields"] == ["category", "files_key", "name", "owner"]
    assert "field 'files_key' changed type" in str(caught.value)


class GrownSkillIngested(Payload):
    """skill-ingested with what a minor revision may add: an optional field."""

    topic: ClassVar[str] = topics.SKILL_INGESTED
    key_field: ClassVar[str] = "skill_id"
    kind: Literal["skill-ingested"] = "skill-ingested"
    skill_id: str
    name: str
    record_key: str = Field(description="store key of the SkillRecord JSON")
    files_key: str = Field(description="store key of the skill folder archive")
    category: str | None = None
    licence: str | None = None
    tags: list[str] = Field(default_factory=list)


def test_adding_optional_fields_keeps_the_promise() -> None:
    assert breaking_changes(PUBLISHED["skill-ingested.schema.json"], payload_schema(GrownSkillIngested)) == []


class NarrowedEnvValidated(EnvValidated):
    label: Literal["skill-dep", "unlabelled"] = "unlabelled"  # type: ignore[assignment]
    reasons: list[int] = Field(default_factory=list)  # type: ignore[assignment]


def test_removing_an_enum_value_or_retyping_array_items_breaks_it() -> None:
    changes = breaking_changes(PUBLISHED["env-validated.schema.json"], payload_schema(NarrowedEnvValidated))
    assert sorted((c.field, c.change) for c in changes) == [("label", "enum_value_removed"), ("reasons[]", "type_changed")]
    assert "lost the enum value 'verifier-passed'" in str(next(c for c in changes if c.field == "label"))


def test_a_changed_kind_and_a_vanished_payload_break_it() -> None:
    current: dict[str, Any] = dict(generated_schemas())
    renamed = payload_schema(SkillIngested)
    renamed["properties"]["kind"] = renamed["properties"]["kind"] | {"const": "skill-found"}
    current["skill-ingested.schema.json"] = renamed
    del current["training-completed.schema.json"]
    changes = compare_schema_sets(PUBLISHED, current)
    assert sorted((c.schema, c.field, c.change) for c in changes) == [
        ("skill-ingested.schema.json", "kind", "const_changed"),
        ("training-completed.schema.json", "(schema)", "schema_removed"),
    ]


def test_a_field_that_stops_being_required_breaks_it() -> None:
    published = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    current = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert [str(c) for c in breaking_changes(published, current, "x.json")] == [
        "x.json: field 'a' is no longer required: consumers rely on it"
    ]
