"""Reading dead letters: tolerant parsing, the in-memory bus, an embedded run's log, and Kafka
read by a consumer that joins no group and commits nothing."""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from skillgym_core.bus.base import Delivery
from skillgym_core.bus.dlq import (
    DeadLetterError,
    KafkaDeadLetters,
    LoggedDeadLetters,
    MemoryDeadLetters,
    parse_dead_letter,
    write_dead_letter_log,
)
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import to_record
from skillgym_core.service import Worker
from skillgym_core.store.local import LocalStore

from tests.core.test_worker import PackageBuilder, publish, skill_event
from tests.support.services import KafkaServer, free_port

SKILL_DLQ = topics.dlq(topics.SKILL_INGESTED)


def letter_bytes(value: bytes, **fields: object) -> bytes:
    record = {"service": "builder", "topic": topics.SKILL_INGESTED, "partition": 0, "offset": 3, "key": "skill-1",
              "attempts": 3, "error": {"error": "TransientError", "reason": "transient", "message": "down"},
              "value_b64": base64.b64encode(value).decode(), **fields}  # fmt: skip
    return json.dumps(record).encode()


def dead_lettering_worker(bus: MemoryBus | KafkaBus, store: LocalStore, topic: str = topics.SKILL_INGESTED) -> Worker:
    return Worker(PackageBuilder(store, always_fail=True, consumes=(topic,)), bus, store, max_attempts=2, backoff_s=0)


def test_a_letter_is_known_by_its_event_id_and_keeps_fields_it_does_not_know() -> None:
    event = skill_event()
    raw = letter_bytes(event.to_bytes(), dead_lettered_at="2025-03-01T10:00:00Z", trace="abc")
    letter = parse_dead_letter(Delivery(SKILL_DLQ, 1, 7, "skill-1", raw))
    assert letter.id == event.event_id and letter.event == event and letter.value == event.to_bytes()
    assert (letter.topic, letter.service, letter.reason, letter.attempts) == (topics.SKILL_INGESTED, "builder", "transient", 3)
    assert (letter.dlq_topic, letter.partition, letter.offset) == (SKILL_DLQ, 1, 7)
    assert letter.when == dt.datetime(2025, 3, 1, 10, tzinfo=dt.UTC)
    assert letter.record["trace"] == "abc"


def test_poison_and_unreadable_letters_still_get_an_id_and_a_reason() -> None:
    broker_time = dt.datetime(2025, 1, 2, tzinfo=dt.UTC)
    poison = parse_dead_letter(Delivery(SKILL_DLQ, 0, 0, "k", letter_bytes(b"{not json", timestamp=1735776000000)))
    assert poison.id.startswith("raw-") and poison.event is None and poison.value == b"{not json"
    assert poison.when == dt.datetime(2025, 1, 2, tzinfo=dt.UTC)
    named = parse_dead_letter(Delivery(SKILL_DLQ, 0, 1, "k", letter_bytes(b"junk", event_id="evt-given")))
    assert named.id == "evt-given"

    junk = parse_dead_letter(Delivery(SKILL_DLQ, 0, 2, None, b"\xff not a letter"), broker_time)
    assert junk.reason == "unreadable_letter" and junk.value is None and junk.topic == topics.SKILL_INGESTED
    assert junk.id.startswith("raw-") and junk.when == broker_time and junk.attempts is None


def test_the_worker_s_letters_read_from_memory_and_from_an_embedded_run_s_log(tmp_path: Path) -> None:
    bus, store = MemoryBus(), LocalStore(tmp_path / "store")
    worker = dead_lettering_worker(bus, store)
    event = skill_event()
    publish(bus, event)
    bus.publish(topics.SKILL_INGESTED, "poison", b"{not json")
    worker.run_once()

    in_memory = MemoryDeadLetters(bus).read(SKILL_DLQ)
    assert [(lt.id, lt.service, lt.attempts) for lt in in_memory] == [
        (event.event_id, "test-builder", 2), (in_memory[1].id, "test-builder", 0)
    ]
    assert in_memory[1].reason == "poison"

    log_dir = tmp_path / "run" / "dlq"
    log_dir.mkdir(parents=True)
    (log_dir / "env-built.dlq.jsonl").write_text("left by an earlier run\n")
    write_dead_letter_log(log_dir, bus.records(SKILL_DLQ))
    logged = LoggedDeadLetters(log_dir)
    kept = logged.read(SKILL_DLQ)
    assert [letter.when for letter in in_memory] == [None, None]
    assert all(letter.when is not None for letter in kept)
    assert [replace(letter, when=None) for letter in kept] == in_memory
    assert not logged.holds(topics.dlq(topics.ENV_BUILT)) and logged.read(topics.dlq(topics.ENV_BUILT)) == []


def test_a_missing_or_damaged_log_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(DeadLetterError) as missing:
        LoggedDeadLetters(tmp_path / "nope")
    assert missing.value.reason == "no_dlq_log"
    (tmp_path / f"{SKILL_DLQ}.jsonl").write_text('{"partition": 0}\n')
    with pytest.raises(DeadLetterError) as damaged:
        LoggedDeadLetters(tmp_path).read(SKILL_DLQ)
    assert damaged.value.reason == "unreadable_dlq_log" and damaged.value.details["line"] == 1


def test_an_unreachable_broker_is_a_typed_error() -> None:
    with pytest.raises(DeadLetterError) as raised:
        KafkaDeadLetters(f"127.0.0.1:{free_port()}", timeout_s=1)
    assert raised.value.reason == "broker_unreachable"


@pytest.fixture
def kafka_bus(kafka: KafkaServer) -> Iterator[KafkaBus]:
    bus = KafkaBus(kafka.bootstrap, partitions=2)
    yield bus
    bus.close()


@pytest.mark.integration
def test_kafka_letters_are_read_to_the_end_without_a_group_or_a_commit(
    kafka_bus: KafkaBus, tmp_path: Path, fresh_group: str
) -> None:
    from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped,unused-ignore]

    topic = f"in-{uuid.uuid4().hex[:10]}"
    kafka_bus.ensure_topics([topic, topics.ENV_BUILT])
    store = LocalStore(tmp_path / "store")
    worker = Worker(
        PackageBuilder(store, always_fail=True, consumes=(topic,)), kafka_bus, store, group=fresh_group,
        max_attempts=2, backoff_s=0,
    )  # fmt: skip
    events = [skill_event(f"skill-{i}") for i in range(3)]
    for event in events:
        publish(kafka_bus, event, topic)
    while worker.stats.dead_lettered < 3:
        worker.run_once(timeout_s=0.5)
    worker.close()
    admin = KafkaAdminClient(bootstrap_servers=kafka_bus.bootstrap)
    groups_before = {group["group_id"] for group in admin.list_groups()}
    assert fresh_group in groups_before

    reader = KafkaDeadLetters(kafka_bus.bootstrap, timeout_s=15)
    try:
        assert reader.holds(topics.dlq(topic)) and not reader.holds(topics.dlq("no-such-topic"))
        first = reader.read(topics.dlq(topic))
        again = reader.read(topics.dlq(topic))
    finally:
        reader.close()
    assert sorted(lt.id for lt in first) == sorted(e.event_id for e in events)
    assert again == first
    assert all(lt.topic == topic and lt.when is not None and lt.service == "test-builder" for lt in first)
    assert {group["group_id"] for group in admin.list_groups()} == groups_before
    admin.close()


def test_a_letter_of_a_binary_cloudevent_is_read_through_its_headers() -> None:
    event = skill_event()
    record = to_record(event, "binary")
    raw = letter_bytes(record.value, headers_b64=[[n, base64.b64encode(v).decode()] for n, v in record.headers])
    letter = parse_dead_letter(Delivery(SKILL_DLQ, 0, 0, "skill-1", raw))
    assert (letter.id, letter.event, letter.headers) == (event.event_id, event, record.headers)

    without_headers = parse_dead_letter(Delivery(SKILL_DLQ, 0, 1, "skill-1", letter_bytes(record.value)))
    assert without_headers.event is None and without_headers.id.startswith("raw-")
