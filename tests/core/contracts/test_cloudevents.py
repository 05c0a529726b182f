"""The CloudEvents codec: both content modes round-trip and parse with the CloudEvents SDK, the
envelope JSON of older producers is still read, and anything else is poison."""

from __future__ import annotations

import json
from typing import Any

import pytest
from skillgym_core.bus.base import Delivery, Headers
from skillgym_core.contracts.cloudevents import (
    EventMode,
    event_type,
    from_record,
    read_event,
    record_mode,
    schema_id,
    to_record,
    to_structured,
)
from skillgym_core.contracts.events import Envelope, Payload, SkillIngested
from skillgym_core.errors import PoisonEventError

from tests.core.test_contracts import SAMPLES
from tests.support.event_contracts import sdk_event, violations

MODES: list[EventMode] = ["binary", "structured"]
BINARY_HEADERS = {"ce_id", "ce_source", "ce_type", "ce_specversion", "ce_time", "ce_subject", "content-type",
                  "ce_dataschema", "ce_correlationid", "ce_producer"}  # fmt: skip


def wrap(payload: Payload) -> Envelope:
    return Envelope.wrap(payload, producer="tests", correlation_id="run-7")


def delivered(event: Envelope, mode: EventMode) -> Delivery:
    record = to_record(event, mode)
    return Delivery(record.topic, 0, 0, record.key, record.value, record.headers)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_every_payload_round_trips_in_both_modes(payload: Payload, mode: EventMode) -> None:
    event = wrap(payload)
    record = to_record(event, mode)

    assert (record.topic, record.key) == (payload.topic, payload.key())
    assert record_mode(record.headers) == mode
    assert from_record(record.value, record.headers) == event


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_the_cloudevents_sdk_reads_what_is_published(payload: Payload, mode: EventMode) -> None:
    event = wrap(payload)
    parsed = sdk_event(delivered(event, mode))

    assert parsed.get_attributes() | {"time": None} == {
        "specversion": "1.0", "id": event.event_id, "source": "/skillgym/tests", "type": event_type(payload.topic),
        "time": None, "subject": payload.key(), "datacontenttype": "application/json",
        "dataschema": schema_id(payload.topic), "correlationid": "run-7", "producer": "tests",
        "partitionkey": payload.key(),
    }  # fmt: skip
    assert parsed.get_time() == event.time
    assert parsed.get_data() == payload.model_dump(mode="json")
    assert violations([delivered(event, mode)], known_publishers=False) == []


def test_binary_mode_puts_the_payload_in_the_value_and_every_attribute_in_a_header() -> None:
    event = wrap(SAMPLES[0])
    record = to_record(event, "binary")
    assert {name for name, _ in record.headers} == BINARY_HEADERS
    assert json.loads(record.value) == SAMPLES[0].model_dump(mode="json")
    assert dict(record.headers)["ce_type"] == b"io.skillgym.skill-ingested.v1"


def test_structured_mode_is_the_json_event_format() -> None:
    event = wrap(SAMPLES[1])
    record = to_record(event, "structured")
    assert record.headers == (("content-type", b"application/cloudevents+json; charset=UTF-8"),)
    assert json.loads(record.value) == to_structured(event)


def test_the_envelope_json_of_older_producers_is_read() -> None:
    event = wrap(SAMPLES[2])
    assert record_mode(()) == "envelope"
    assert read_event(Delivery(event.type, 0, 0, event.key, event.to_bytes())) == event


def test_a_structured_event_without_its_content_type_header_is_read() -> None:
    event = wrap(SAMPLES[3])
    assert from_record(json.dumps(to_structured(event)).encode()) == event


def _binary(**changes: bytes | None) -> tuple[bytes, Headers]:
    record = to_record(wrap(SAMPLES[0]), "binary")
    headers = {name: value for name, value in record.headers}
    for name, value in changes.items():
        if value is None:
            headers.pop(name.replace("_", "-") if name == "content_type" else name)
        else:
            headers[name.replace("_", "-") if name == "content_type" else name] = value
    return record.value, tuple(headers.items())


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (_binary(ce_type=b"io.skillgym.no-such-topic.v1"), "unknown_type"),
        (_binary(ce_type=b"io.skillgym.skill-ingested.v2"), "unknown_type"),
        (_binary(ce_type=b"io.skillgym.env-built.v1"), "type_mismatch"),
        (_binary(ce_specversion=b"0.3"), "specversion"),
        (_binary(ce_id=None), "missing_attributes"),
        (_binary(ce_correlationid=None), "missing_attributes"),
        (_binary(content_type=b"application/avro"), "content_type"),
        (_binary(ce_time=b"yesterday"), "time"),
        (_binary(ce_subject=b"\xff\xfe"), "header_encoding"),
        ((b'{"kind": "skill-ingested"}', _binary()[1]), "payload"),
        ((b"not json", _binary()[1]), "payload"),
        ((b"not json", (("content-type", b"application/cloudevents+json"),)), "not_json"),
        ((json.dumps({"specversion": "1.0", "data_base64": "AA=="}).encode(),
          (("content-type", b"application/cloudevents+json"),)), "no_json_data"),
    ],
    ids=["unknown-topic", "other-major", "payload-of-another-type", "specversion", "no-id", "no-correlation",
         "avro", "bad-time", "non-utf8-header", "incomplete-payload", "binary-garbage", "structured-garbage",
         "base64-data"],
)  # fmt: skip
def test_records_holding_no_event_are_poison_with_the_problem_named(record: tuple[bytes, Headers], problem: str) -> None:
    value, headers = record
    with pytest.raises(PoisonEventError) as caught:
        from_record(value, headers)
    assert caught.value.reason == "poison"
    assert caught.value.details["problem"] == problem


def test_unknown_attributes_are_ignored_and_the_producer_falls_back_to_the_source() -> None:
    event = wrap(SAMPLES[0])
    document: dict[str, Any] = to_structured(event) | {"traceparent": "00-abc-def-01"}
    del document["producer"]
    assert from_record(json.dumps(document).encode()) == event


@pytest.mark.parametrize("mode", MODES)
def test_fields_a_later_revision_added_are_ignored(mode: EventMode) -> None:
    event = wrap(SkillIngested(skill_id="s", name="n", record_key="r", files_key="f"))
    record = to_record(event, mode)
    document = json.loads(record.value)
    (document if mode == "binary" else document["data"])["added_later"] = {"any": "thing"}

    assert from_record(json.dumps(document).encode(), record.headers) == event
