"""The AsyncAPI 3.0 document of SkillGym's events: every topic and its ``.dlq`` as a channel,
each event in both CloudEvents content modes as messages (key, headers, payload by reference
to its JSON Schema), who sends and who receives them (with the consumer groups), and the Kafka
bindings."""

from __future__ import annotations

from typing import Any

import yaml

from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import (
    DATA_CONTENT_TYPE,
    MAJOR_VERSION,
    SOURCE_PREFIX,
    SPEC_VERSION,
    STRUCTURED_CONTENT_TYPE,
    event_type,
    schema_id,
)
from skillgym_core.contracts.events import kind_of
from skillgym_core.contracts.schemas import schema_file
from skillgym_core.contracts.topology import Route, consumer_group, routes

ASYNCAPI_VERSION = "3.0.0"
KAFKA_BINDING_VERSION = "0.5.0"
CLIENT_ID_PREFIX = "skillgym-"  # KafkaBus names its consumers' clients skillgym-<group>

HEADER_DESCRIPTIONS = {
    "ce_specversion": f"CloudEvents version: {SPEC_VERSION}",
    "ce_id": "content-derived event id: the same event published again keeps it (deduplicate on it)",
    "ce_source": f"{SOURCE_PREFIX}<producer>",
    "ce_type": "io.skillgym.<topic>.v<major>",
    "ce_time": "when the event was made (RFC 3339)",
    "ce_subject": "the entity id the event is about; also the record key",
    "content-type": f"media type of the record value: {DATA_CONTENT_TYPE}",
    "ce_dataschema": "$id of the payload's JSON Schema",
    "ce_correlationid": "the run the event belongs to (extension attribute)",
    "ce_producer": "the service that made the event (extension attribute)",
}
STRUCTURED_ATTRIBUTES = {
    "specversion": "ce_specversion", "id": "ce_id", "source": "ce_source", "type": "ce_type", "time": "ce_time",
    "subject": "ce_subject", "datacontenttype": "content-type", "dataschema": "ce_dataschema",
    "correlationid": "ce_correlationid", "producer": "ce_producer",
}  # fmt: skip


def channel_id(topic: str) -> str:
    """``skill-ingested`` -> ``skillIngested``; ``.dlq`` topics end in ``Dlq``."""
    words = topic.replace(".", "-").split("-")
    return words[0] + "".join(word.capitalize() for word in words[1:])


def _ref(*path: str) -> dict[str, str]:
    return {"$ref": "#/" + "/".join(path)}


def _string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _shared_schemas() -> dict[str, Any]:
    return {
        "cloudEventHeaders": {
            "type": "object",
            "description": "CloudEvents attributes as Kafka headers (binary content mode), UTF-8 values",
            "required": list(HEADER_DESCRIPTIONS),
            "properties": {name: _string(text) for name, text in HEADER_DESCRIPTIONS.items()},
        },
        "structuredEvent": {
            "type": "object",
            "description": "an event in the CloudEvents JSON event format (structured content mode)",
            "required": [*STRUCTURED_ATTRIBUTES, "data"],
            "properties": {
                **{name: _string(HEADER_DESCRIPTIONS[header]) for name, header in STRUCTURED_ATTRIBUTES.items()},
                "data": {"type": "object", "description": "the payload"},
            },
        },
        "deadLetter": {
            "type": "object",
            "description": "an event a consumer gave up on, with the record it came in",
            "required": ["service", "topic", "partition", "offset", "attempts", "error", "value_b64"],
            "properties": {
                "service": _string("the consumer that gave up"),
                "topic": _string("the topic the event was read from"),
                "partition": {"type": "integer"},
                "offset": {"type": "integer"},
                "key": {"type": ["string", "null"], "description": "the record key"},
                "attempts": {"type": "integer", "description": "handler attempts (0: the record holds no event)"},
                "error": {"type": "object", "description": "error, reason, message and the error's details"},
                "value_b64": _string("the record value, base64"),
                "headers_b64": {
                    "type": "array",
                    "description": "the record headers as [name, base64 value] pairs (binary mode)",
                    "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
                },
            },
        },
    }


def _messages(route: Route) -> dict[str, Any]:
    ident, kind = channel_id(route.topic), kind_of(route.payload)
    fixed = {"ce_type": {"const": event_type(route.topic)}, "ce_dataschema": {"const": schema_id(kind)}}
    key = {"type": "string", "description": f"the payload's {route.key_field}: every event of one entity "
                                            "lands on one partition, in order"}  # fmt: skip
    common = {
        "title": route.payload.__name__,
        "summary": (route.payload.__doc__ or f"An event on {route.topic}.").strip().splitlines()[0],
        "bindings": {"kafka": {"key": key, "bindingVersion": KAFKA_BINDING_VERSION}},
    }
    return {
        ident: {
            "name": route.topic,
            **common,
            "contentType": DATA_CONTENT_TYPE,
            "headers": {"allOf": [_ref("components", "schemas", "cloudEventHeaders"),
                                  {"type": "object", "properties": fixed}]},
            "payload": {"$ref": schema_file(kind)},
            "correlationId": {"location": "$message.header#/ce_correlationid"},
        },
        f"{ident}Structured": {
            "name": f"{route.topic} (structured)",
            **common,
            "contentType": STRUCTURED_CONTENT_TYPE.split(";")[0],
            "headers": {"type": "object", "properties": {"content-type": {"const": STRUCTURED_CONTENT_TYPE}}},
            "payload": {"allOf": [
                _ref("components", "schemas", "structuredEvent"),
                {"type": "object", "properties": {"type": {"const": event_type(route.topic)},
                                                  "dataschema": {"const": schema_id(kind)},
                                                  "data": {"$ref": schema_file(kind)}}},
            ]},
            "correlationId": {"location": "$message.payload#/correlationid"},
        },
    }


def _channels(all_routes: tuple[Route, ...]) -> dict[str, Any]:
    channels: dict[str, Any] = {}
    for route in all_routes:
        ident, dead = channel_id(route.topic), topics.dlq(route.topic)
        channels[ident] = {
            "address": route.topic,
            "title": route.topic,
            "description": f"{route.payload.__name__} events, keyed by {route.key_field}. Published by "
                           f"{', '.join(route.publishers)}; read by {', '.join(route.consumers) or 'no SkillGym service'}.",
            "messages": {name: _ref("components", "messages", name) for name in (ident, f"{ident}Structured")},
            "bindings": {"kafka": {"topic": route.topic, "bindingVersion": KAFKA_BINDING_VERSION}},
        }  # fmt: skip
        channels[channel_id(dead)] = {
            "address": dead,
            "title": dead,
            "description": f"dead letters of {route.topic}: events its consumers gave up on",
            "messages": {"deadLetter": _ref("components", "messages", "deadLetter")},
            "bindings": {"kafka": {"topic": dead, "bindingVersion": KAFKA_BINDING_VERSION}},
        }
    return channels


def _operations(all_routes: tuple[Route, ...]) -> dict[str, Any]:
    operations: dict[str, Any] = {}
    for route in all_routes:
        ident = channel_id(route.topic)
        dead = channel_id(topics.dlq(route.topic))
        messages = [_ref("channels", ident, "messages", name) for name in (ident, f"{ident}Structured")]
        for publisher in route.publishers:
            operations[f"{publisher}Sends{ident[0].upper()}{ident[1:]}"] = {
                "action": "send",
                "channel": _ref("channels", ident),
                "summary": f"{publisher} publishes {route.topic}",
                "messages": messages,
            }
        for consumer in route.consumers:
            group = consumer_group(consumer)
            operations[f"{consumer}Receives{ident[0].upper()}{ident[1:]}"] = {
                "action": "receive",
                "channel": _ref("channels", ident),
                "summary": f"{consumer} consumes {route.topic} in the consumer group {group}",
                "messages": messages,
                "bindings": {"kafka": {
                    "groupId": {"type": "string", "enum": [group]},
                    "clientId": {"type": "string", "enum": [CLIENT_ID_PREFIX + group]},
                    "bindingVersion": KAFKA_BINDING_VERSION,
                }},
            }  # fmt: skip
            operations[f"{consumer}DeadLetters{ident[0].upper()}{ident[1:]}"] = {
                "action": "send",
                "channel": _ref("channels", dead),
                "summary": f"{consumer} dead-letters the {route.topic} events it gives up on",
                "messages": [_ref("channels", dead, "messages", "deadLetter")],
            }
    return operations


def asyncapi_document() -> dict[str, Any]:
    all_routes = routes()
    messages: dict[str, Any] = {}
    for route in all_routes:
        messages.update(_messages(route))
    messages["deadLetter"] = {
        "name": "dead-letter",
        "title": "DeadLetter",
        "contentType": DATA_CONTENT_TYPE,
        "payload": _ref("components", "schemas", "deadLetter"),
        "bindings": {"kafka": {"key": {"type": "string", "description": "the original record's key"},
                               "bindingVersion": KAFKA_BINDING_VERSION}},
    }  # fmt: skip
    return {
        "asyncapi": ASYNCAPI_VERSION,
        "info": {
            "title": "SkillGym events",
            "version": f"{MAJOR_VERSION}.0.0",
            "description": (
                "Every SkillGym event is a CloudEvents 1.0 event on Kafka: binary content mode by default "
                "(SKILLGYM_EVENT_MODE=structured for the JSON event format), the entity id as the record key. "
                f"Types are io.skillgym.<topic>.v{MAJOR_VERSION}. Within a major version changes are additive "
                "and optional only: ignore fields you do not know. Topic and consumer group names take the "
                "deployment's SKILLGYM_TOPIC_PREFIX in front when one is set."
            ),
        },
        "defaultContentType": DATA_CONTENT_TYPE,
        "servers": {"kafka": {"host": "kafka:9092", "protocol": "kafka",
                              "description": "the brokers of SKILLGYM_KAFKA_BOOTSTRAP"}},
        "channels": _channels(all_routes),
        "operations": _operations(all_routes),
        "components": {"messages": messages, "schemas": _shared_schemas()},
    }


def render_yaml(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=110)
