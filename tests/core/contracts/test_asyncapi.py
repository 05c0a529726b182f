"""The AsyncAPI 3.0 document: a channel per topic and per dead-letter topic, each event in both
content modes with its key, ce_* headers and payload schema, the consumer groups, every
reference resolving."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from skillgym_core.contracts import topics
from skillgym_core.contracts.asyncapi import asyncapi_document, channel_id
from skillgym_core.contracts.schemas import ASYNCAPI_FILE, published_dir
from skillgym_core.contracts.topology import CONSUMERS

DOCUMENT = yaml.safe_load(published_dir().joinpath(ASYNCAPI_FILE).read_text())


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def resolve(pointer: str) -> Any:
    node: Any = DOCUMENT
    for part in pointer.removeprefix("#/").split("/"):
        node = node[part]
    return node


def test_the_shipped_document_is_the_generated_one() -> None:
    assert asyncapi_document() == DOCUMENT
    assert DOCUMENT["asyncapi"] == "3.0.0"


def test_every_topic_and_its_dead_letter_topic_is_a_channel() -> None:
    addresses = {channel["address"] for channel in DOCUMENT["channels"].values()}
    assert addresses == set(topics.ALL_TOPICS) | {topics.dlq(t) for t in topics.ALL_TOPICS}
    for channel in DOCUMENT["channels"].values():
        assert channel["bindings"]["kafka"]["topic"] == channel["address"]


def test_every_reference_resolves_and_payloads_point_at_the_shipped_schemas() -> None:
    shipped = {entry.name for entry in published_dir().iterdir()}
    found = list(refs(DOCUMENT))
    assert found
    for ref in found:
        if ref.startswith("#/"):
            assert resolve(ref) is not None, ref
        else:
            assert ref in shipped, ref


def test_binary_messages_carry_the_key_and_the_ce_headers() -> None:
    headers = DOCUMENT["components"]["schemas"]["cloudEventHeaders"]
    assert set(headers["required"]) == {"ce_id", "ce_source", "ce_type", "ce_specversion", "ce_time", "ce_subject",
                                        "content-type", "ce_dataschema", "ce_correlationid", "ce_producer"}  # fmt: skip
    message = DOCUMENT["components"]["messages"]["envBuilt"]
    assert message["payload"] == {"$ref": "env-built.schema.json"}
    assert message["headers"]["allOf"][1]["properties"]["ce_type"] == {"const": "io.skillgym.env-built.v1"}
    assert "task_id" in message["bindings"]["kafka"]["key"]["description"]
    assert message["correlationId"]["location"] == "$message.header#/ce_correlationid"
    structured = DOCUMENT["components"]["messages"]["envBuiltStructured"]
    assert structured["contentType"] == "application/cloudevents+json"


def test_receive_operations_name_skillgyms_consumer_groups() -> None:
    groups: dict[str, set[str]] = {}
    for operation in DOCUMENT["operations"].values():
        if operation["action"] == "receive":
            address = resolve(operation["channel"]["$ref"])["address"]
            groups.setdefault(address, set()).update(operation["bindings"]["kafka"]["groupId"]["enum"])
    assert groups == {t: {f"skillgym-{s}" for s in consumers} for t, consumers in CONSUMERS.items() if consumers}


def test_consumers_send_their_dead_letters_to_the_dlq_channel() -> None:
    sent = {
        resolve(op["channel"]["$ref"])["address"]
        for op in DOCUMENT["operations"].values()
        if op["action"] == "send" and op["channel"]["$ref"].endswith("Dlq")
    }
    assert sent == {topics.dlq(t) for t, consumers in CONSUMERS.items() if consumers}
    assert channel_id("skill-ingested.dlq") == "skillIngestedDlq"
