"""Checking records against the published event contracts with third-party tools only: the
CloudEvents SDK's own Kafka parser and ``jsonschema`` with the shipped JSON Schemas."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import jsonschema
from cloudevents.core.bindings import kafka as cloudevents_kafka
from skillgym_core.bus.base import Delivery
from skillgym_core.contracts.schemas import load_schemas, published_dir
from skillgym_core.contracts.topology import PUBLISHERS

TYPE = re.compile(r"^io\.skillgym\.(?P<topic>[a-z-]+)\.v1$")
REQUIRED = ("id", "source", "type", "specversion", "time", "subject", "datacontenttype", "dataschema",
            "correlationid", "producer")  # fmt: skip


def sdk_event(delivery: Delivery) -> Any:
    """The record parsed by the CloudEvents SDK, in the content mode its headers announce."""
    headers = dict(delivery.headers)
    message = cloudevents_kafka.KafkaMessage(headers=headers, key=delivery.key, value=delivery.value)
    if headers.get("content-type", b"").lower().startswith(b"application/cloudevents"):
        return cloudevents_kafka.from_structured_event(message)
    return cloudevents_kafka.from_binary_event(message)


def validators() -> dict[str, jsonschema.Draft202012Validator]:
    return {schema["$id"]: jsonschema.Draft202012Validator(schema) for schema in load_schemas(published_dir()).values()}


def violations(deliveries: Iterable[Delivery], *, known_publishers: bool = True) -> list[str]:
    """What in ``deliveries`` breaks the contract: each must parse with the SDK, carry every
    attribute SkillGym promises, have the type of its topic, the record key as its subject, a
    publisher the topology names (unless ``known_publishers`` is False: events a test made),
    and data valid against the schema its dataschema names."""
    by_id = validators()
    problems: list[str] = []
    for delivery in deliveries:
        where = f"{delivery.topic}/{delivery.partition}/{delivery.offset}"
        try:
            event = sdk_event(delivery)
        except Exception as exc:  # the SDK raises several types for records that hold no CloudEvent
            problems.append(f"{where}: the CloudEvents SDK cannot parse it: {exc}")
            continue
        attributes = event.get_attributes()
        missing = [name for name in REQUIRED if not attributes.get(name)]
        match = TYPE.match(str(attributes.get("type")))
        if missing:
            problems.append(f"{where}: lacks {missing}")
        elif match is None or match["topic"] != delivery.topic:
            problems.append(f"{where}: type {attributes['type']} is not the type of its topic")
        elif attributes["subject"] != delivery.key:
            problems.append(f"{where}: subject {attributes['subject']} is not the record key {delivery.key}")
        elif known_publishers and attributes["producer"] not in PUBLISHERS[delivery.topic]:
            problems.append(f"{where}: published by {attributes['producer']}, not by {PUBLISHERS[delivery.topic]}")
        elif attributes["dataschema"] not in by_id:
            problems.append(f"{where}: no published schema is {attributes['dataschema']}")
        else:
            problems.extend(f"{where}: {error.message}" for error in by_id[attributes["dataschema"]].iter_errors(event.get_data()))
    return problems
