"""CloudEvents 1.0 over Kafka: how an :class:`Envelope` travels as a Kafka record, and back.

=================  ===================  ==================================================
attribute          binary-mode header   value
=================  ===================  ==================================================
specversion        ce_specversion       ``1.0``
id                 ce_id                the envelope's content-derived ``event_id``
source             ce_source            ``/skillgym/<producer>``
type               ce_type              ``io.skillgym.<topic>.v<major>``
time               ce_time              when the event was made (RFC 3339)
subject            ce_subject           the entity id, which is also the record key
datacontenttype    content-type         ``application/json``
dataschema         ce_dataschema        the ``$id`` of the payload's JSON Schema
correlationid      ce_correlationid     the run the event belongs to (extension)
producer           ce_producer          the service that made it (extension)
=================  ===================  ==================================================

Binary mode (the default) carries the payload JSON as the record value and every other
attribute as a header; structured mode carries the whole event in the JSON event format as the
value, with ``content-type: application/cloudevents+json``. Records are read in either mode, and
also as the envelope JSON (no headers) published before events were CloudEvents. A CloudEvent's
payload may carry fields this version does not know (a later revision of the same major version
added them): they are ignored.

The publish path builds headers with plain code: it runs for every record of a batch."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from skillgym_core.bus.base import Bus, Delivery, Headers, Outgoing, header_value
from skillgym_core.contracts.events import AnyPayload, Envelope, Payload, kind_of, payload_types
from skillgym_core.errors import PoisonEventError

EventMode = Literal["binary", "structured"]
RecordMode = Literal["binary", "structured", "envelope"]

SPEC_VERSION = "1.0"
MAJOR_VERSION = 1
TYPE_PREFIX = "io.skillgym."
SOURCE_PREFIX = "/skillgym/"
SCHEMA_BASE_URL = "https://skillgym.io/schemas/events/"
DATA_CONTENT_TYPE = "application/json"
STRUCTURED_CONTENT_TYPE = "application/cloudevents+json; charset=UTF-8"
CLOUDEVENTS_MEDIA_TYPE = b"application/cloudevents"
HEADER_PREFIX = "ce_"
CONTENT_TYPE_HEADER = "content-type"
REQUIRED_ATTRIBUTES = ("id", "source", "type", "time", "correlationid")

_PAYLOAD: TypeAdapter[Any] = TypeAdapter(AnyPayload)
_ENVELOPE = TypeAdapter(Envelope)  # several times quicker than Envelope(...) for a parsed payload


def schema_folder() -> str:
    """The folder the schemas of this major version are published in (``v1``)."""
    return f"v{MAJOR_VERSION}"


def event_type(topic: str) -> str:
    """The CloudEvents ``type`` of the events on ``topic``, reverse-DNS and versioned by major."""
    return f"{TYPE_PREFIX}{topic}.v{MAJOR_VERSION}"


def schema_id(kind: str) -> str:
    """The ``$id`` of the JSON Schema of the payload ``kind`` (the events' ``dataschema``)."""
    return f"{SCHEMA_BASE_URL}{schema_folder()}/{kind}.schema.json"


# A payload's kind is the name of its topic; per topic the headers that never change.
_TOPIC_BY_TYPE = {event_type(model.topic): model.topic for model in payload_types()}
_FIXED_HEADERS: dict[str, Headers] = {
    model.topic: (
        ("ce_specversion", SPEC_VERSION.encode()),
        ("ce_type", event_type(model.topic).encode()),
        (CONTENT_TYPE_HEADER, DATA_CONTENT_TYPE.encode()),
        ("ce_dataschema", schema_id(kind_of(model)).encode()),
    )
    for model in payload_types()
}
_STRUCTURED_HEADERS: Headers = ((CONTENT_TYPE_HEADER, STRUCTURED_CONTENT_TYPE.encode()),)


def topic_of(ce_type: str) -> str:
    """The topic whose events have the CloudEvents type ``ce_type``."""
    try:
        return _TOPIC_BY_TYPE[ce_type]
    except KeyError:
        raise PoisonEventError(
            f"unknown event type {ce_type!r}: SkillGym's types are {TYPE_PREFIX}<topic>.v{MAJOR_VERSION}",
            problem="unknown_type",
            event_type=ce_type,
        ) from None


def rfc3339(moment: dt.datetime) -> str:
    text = (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def binary_headers(event: Envelope) -> Headers:
    topic = event.payload.topic
    return (
        *_FIXED_HEADERS[topic],
        ("ce_id", event.event_id.encode()),
        ("ce_source", (SOURCE_PREFIX + event.producer).encode()),
        ("ce_time", rfc3339(event.time).encode()),
        ("ce_subject", event.key.encode()),
        ("ce_correlationid", event.correlation_id.encode()),
        ("ce_producer", event.producer.encode()),
    )


def to_structured(event: Envelope) -> dict[str, Any]:
    """The event in the CloudEvents JSON event format."""
    topic = event.payload.topic
    return {
        "specversion": SPEC_VERSION,
        "id": event.event_id,
        "source": SOURCE_PREFIX + event.producer,
        "type": event_type(topic),
        "time": rfc3339(event.time),
        "subject": event.key,
        "datacontenttype": DATA_CONTENT_TYPE,
        "dataschema": schema_id(kind_of(type(event.payload))),
        "correlationid": event.correlation_id,
        "producer": event.producer,
        "data": event.payload.model_dump(mode="json"),
    }


def to_record(event: Envelope, mode: EventMode = "binary") -> Outgoing:
    """The Kafka record of ``event``: on its topic, keyed by its entity id."""
    if mode == "binary":
        return Outgoing(event.type, event.key, event.payload.model_dump_json().encode(), binary_headers(event))
    return Outgoing(event.type, event.key, json.dumps(to_structured(event)).encode(), _STRUCTURED_HEADERS)


def publish_event(bus: Bus, event: Envelope, mode: EventMode = "binary") -> None:
    record = to_record(event, mode)
    bus.publish(record.topic, record.key, record.value, record.headers)


def record_mode(headers: Headers) -> RecordMode:
    """How a record carries its event: a ``content-type`` of the CloudEvents media type means
    structured mode, a ``ce_specversion`` header binary mode, neither the envelope JSON."""
    content_type = header_value(headers, CONTENT_TYPE_HEADER)
    if content_type is not None and content_type.lower().startswith(CLOUDEVENTS_MEDIA_TYPE):
        return "structured"
    if header_value(headers, "ce_specversion") is not None:
        return "binary"
    return "envelope"


def read_event(delivery: Delivery) -> Envelope:
    return from_record(delivery.value, delivery.headers)


def from_record(value: bytes, headers: Headers = ()) -> Envelope:
    """The event in a record, in any of the modes of :func:`record_mode`; a record that holds
    none raises :class:`PoisonEventError`."""
    mode = record_mode(headers)
    if mode == "binary":
        return _from_binary(value, headers)
    if mode == "structured":
        return from_structured(_json_object(value))
    try:
        return Envelope.from_bytes(value)
    except PoisonEventError:
        document = _json_or_none(value)
        if isinstance(document, dict) and "specversion" in document:  # structured, without its header
            return from_structured(document)
        raise


def from_structured(document: Mapping[str, Any]) -> Envelope:
    """The event in a CloudEvents JSON document (structured mode)."""
    if "data_base64" in document or not isinstance(document.get("data"), dict):
        raise _poison("a SkillGym event carries its payload as a JSON object in 'data'", document, "no_json_data")
    attributes = {name: value for name, value in document.items() if name != "data"}
    content_type = attributes.get("datacontenttype", DATA_CONTENT_TYPE)
    return _envelope(attributes, content_type, lambda: _PAYLOAD.validate_python(document["data"], extra="ignore"),
                     document)


def _from_binary(value: bytes, headers: Headers) -> Envelope:
    attributes: dict[str, Any] = {}
    for name, raw in headers:
        if name.startswith(HEADER_PREFIX):
            attributes[name.removeprefix(HEADER_PREFIX)] = _text(raw, name)
    content_type = _text(header_value(headers, CONTENT_TYPE_HEADER) or b"", CONTENT_TYPE_HEADER)
    return _envelope(attributes, content_type, lambda: _PAYLOAD.validate_json(value, extra="ignore"), value[:200])


def _envelope(attributes: Mapping[str, Any], content_type: object, load: Any, raw: object) -> Envelope:
    if attributes.get("specversion") != SPEC_VERSION:
        raise _poison(f"CloudEvents specversion {attributes.get('specversion')!r} is not {SPEC_VERSION}", raw,
                      "specversion")  # fmt: skip
    missing = [name for name in REQUIRED_ATTRIBUTES if not isinstance(attributes.get(name), str) or not attributes[name]]
    if missing:
        raise _poison(f"event lacks the attributes {', '.join(missing)}", raw, "missing_attributes", missing=missing)
    if not isinstance(content_type, str) or content_type.split(";")[0].strip().lower() != DATA_CONTENT_TYPE:
        raise _poison(f"data content type {content_type!r} is not {DATA_CONTENT_TYPE}", raw, "content_type")
    topic = topic_of(attributes["type"])
    try:
        payload: Payload = load()
        moment = dt.datetime.fromisoformat(attributes["time"])
    except ValidationError as exc:
        raise _poison("event data does not match its payload contract", raw, "payload",
                      errors=exc.errors(include_url=False, include_context=False)) from exc  # fmt: skip
    except ValueError as exc:
        raise _poison(f"event time {attributes['time']!r} is not an RFC 3339 time", raw, "time") from exc
    if payload.topic != topic:
        raise _poison(f"a {payload.topic} payload under the type {attributes['type']}", raw, "type_mismatch")
    producer = attributes.get("producer") or str(attributes["source"]).removeprefix(SOURCE_PREFIX)
    fields = {"event_id": attributes["id"], "type": topic, "time": moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC),
              "producer": producer, "key": payload.key(), "correlation_id": attributes["correlationid"], "payload": payload}  # fmt: skip
    try:
        return _ENVELOPE.validate_python(fields)
    except ValidationError as exc:
        raise _poison("event attributes do not fit the envelope", raw, "attributes",
                      errors=exc.errors(include_url=False, include_context=False)) from exc  # fmt: skip


def _poison(message: str, raw: object, problem: str, **details: Any) -> PoisonEventError:
    prefix = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else json.dumps(raw, default=str)[:200]
    return PoisonEventError(message, problem=problem, raw_prefix=prefix, **details)


def _text(raw: bytes, header: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PoisonEventError(f"header {header} is not UTF-8", problem="header_encoding", header=header) from None


def _json_or_none(value: bytes) -> object:
    try:
        return json.loads(value)
    except ValueError:
        return None


def _json_object(value: bytes) -> dict[str, Any]:
    document = _json_or_none(value)
    if not isinstance(document, dict):
        raise _poison("a structured-mode event is not a JSON object", value[:200], "not_json")
    return document
