"""The Worker over the distributed backends: KafkaBus with LocalStore or S3Store."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from skillgym_core.bus.base import Delivery
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import read_event
from skillgym_core.contracts.events import Envelope, Payload
from skillgym_core.service import Worker
from skillgym_core.store.base import Store
from skillgym_core.store.local import LocalStore
from skillgym_core.store.s3 import S3Store

from tests.core.test_worker import PackageBuilder, publish, skill_event
from tests.support.services import KafkaServer, S3Server, start_s3

pytestmark = pytest.mark.integration


@pytest.fixture
def bus(kafka: KafkaServer) -> Iterator[KafkaBus]:
    bus = KafkaBus(kafka.bootstrap, session_timeout_ms=6000, heartbeat_interval_ms=1000, partitions=2)
    bus.ensure_topics([topics.ENV_BUILT])
    yield bus
    bus.close()


def input_topic(bus: KafkaBus) -> str:
    """A private input topic: outputs still go to the shared env-built topic, told apart by key."""
    topic = f"in-{uuid.uuid4().hex[:10]}"
    bus.ensure_topics([topic])
    return topic


def run_until(worker: Worker, done: Callable[[], bool], timeout_s: float = 45.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, f"worker did not finish: {worker.stats}"
        worker.run_once(timeout_s=0.5)


def read_matching(
    bus: KafkaBus, topic: str, predicate: Callable[[Delivery], bool], count: int, timeout_s: float = 30.0
) -> list[Delivery]:
    sub = bus.subscribe([topic], f"reader-{uuid.uuid4().hex[:8]}")
    found: list[Delivery] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(found) < count and time.monotonic() < deadline:
            found.extend(d for d in sub.poll(timeout_s=0.5) if predicate(d))
    finally:
        sub.close()
    return found


def test_poison_and_exhausted_events_go_to_the_dlq_over_kafka(bus: KafkaBus, tmp_path: Path, fresh_group: str) -> None:
    store = LocalStore(tmp_path / "store")
    topic = input_topic(bus)
    service = PackageBuilder(store, always_fail=True, consumes=(topic,))
    worker = Worker(service, bus, store, group=fresh_group, max_attempts=2, backoff_s=0.05)
    bus.publish(topic, "poison", b"{not json")
    failing = skill_event()
    publish(bus, failing, topic)

    run_until(worker, lambda: worker.stats.dead_lettered == 2)
    assert bus.lag(fresh_group, [topic]) == {topic: 0}
    worker.close()

    dead = read_matching(bus, topics.dlq(topic), lambda d: True, count=2)
    poison_key = "poison"
    records = {d.key: json.loads(d.value) for d in dead}
    assert records[poison_key]["attempts"] == 0
    assert records[poison_key]["error"]["reason"] == "poison"
    assert base64.b64decode(records[poison_key]["value_b64"]) == b"{not json"
    assert records[failing.key]["attempts"] == 2
    assert records[failing.key]["error"]["reason"] == "sandbox"
    assert Envelope.from_bytes(base64.b64decode(records[failing.key]["value_b64"])) == failing
    assert len(service.call_times) == 2


@pytest.fixture
def s3_store(s3: S3Server) -> S3Store:
    bucket = f"skillgym-worker-{uuid.uuid4().hex[:10]}"
    return S3Store(endpoint=s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, bucket=bucket)


def test_a_duplicate_event_is_handled_once_over_kafka_and_s3(bus: KafkaBus, s3_store: Store, fresh_group: str) -> None:
    topic = input_topic(bus)
    service = PackageBuilder(s3_store, consumes=(topic,))
    event = skill_event(f"skill-{uuid.uuid4().hex[:8]}")
    publish(bus, event, topic)
    publish(bus, event, topic)

    first = Worker(service, bus, s3_store, group=fresh_group)
    run_until(first, lambda: first.stats.consumed >= 2)
    first.close()

    assert len(service.call_times) == 1
    assert first.stats.duplicates == 1
    assert len(list(s3_store.list("packages/"))) == 1
    assert list(s3_store.list(f"state/{service.name}/done/")) == [f"state/{service.name}/done/{event.event_id}.json"]
    outputs = read_matching(bus, topics.ENV_BUILT, lambda d: d.key == f"task-{event.key}", count=2)
    assert len(outputs) == 2
    assert read_event(outputs[0]) == read_event(outputs[1])
    assert bus.lag(fresh_group, [topic]) == {topic: 0}

    # A replacement worker in the same group finds nothing left to do.
    second = Worker(service, bus, s3_store, group=fresh_group)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        second.run_once(timeout_s=0.5)
    second.close()
    assert second.stats.consumed == 0
    assert len(service.call_times) == 1


class SlowBuilder(PackageBuilder):
    """Takes a moment per event, so that an outage lands in the middle of the stream."""

    def handle(self, event: Envelope) -> Sequence[Payload]:
        time.sleep(0.1)
        return super().handle(event)


def read_all(bus: KafkaBus, topic: str, predicate: Callable[[Delivery], bool], quiet_s: float = 5.0) -> list[Delivery]:
    """Every matching record on ``topic``, read until nothing new came for ``quiet_s``."""
    sub = bus.subscribe([topic], f"reader-{uuid.uuid4().hex[:8]}")
    found: list[Delivery] = []
    last_new = time.monotonic()
    try:
        while time.monotonic() - last_new < quiet_s:
            batch = sub.poll(timeout_s=0.5)
            if batch:
                last_new = time.monotonic()
            found.extend(d for d in batch if predicate(d))
    finally:
        sub.close()
    return found


def test_an_object_store_outage_mid_stream_loses_and_duplicates_nothing(
    bus: KafkaBus, tmp_path: Path, fresh_group: str
) -> None:
    """MinIO is stopped for 10 s while 30 events flow, then started again on the same port and
    data: every event is handled, none is dead-lettered, and each output is published once."""
    s3 = start_s3(tmp_path / "s3")
    try:
        store = S3Store(
            endpoint=s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, bucket="outage", connect_timeout_s=1
        )
        topic = input_topic(bus)
        service = SlowBuilder(store, consumes=(topic,))
        stop = threading.Event()
        worker = Worker(
            service, bus, store, group=fresh_group, backoff_s=0.2, backoff_max_s=1.0, max_attempts=2, pause=stop.wait
        )
        run = uuid.uuid4().hex[:8]
        events = [skill_event(f"skill-{run}-{i:02d}") for i in range(30)]
        for event in events:
            publish(bus, event, topic)
        escaped: list[BaseException] = []

        def consume() -> None:
            try:
                while not stop.is_set():
                    worker.run_once(timeout_s=0.5, max_records=10)
            except BaseException as exc:
                escaped.append(exc)

        consumer = threading.Thread(target=consume, daemon=True)
        consumer.start()
        deadline = time.monotonic() + 60
        while worker.stats.consumed < 8:
            assert time.monotonic() < deadline and consumer.is_alive(), f"no progress: {worker.stats}"
            time.sleep(0.05)
        s3.stop()
        outage_began = worker.stats.consumed
        time.sleep(10)
        assert worker.stats.consumed < 30, "the outage must hit the stream"
        assert worker.health.down() == ["store"]
        s3.restart()

        deadline = time.monotonic() + 90
        while worker.stats.consumed < 30:
            assert time.monotonic() < deadline and consumer.is_alive(), f"did not recover: {worker.stats}"
            time.sleep(0.2)
        stop.set()
        consumer.join(30)
        worker.close()
        assert escaped == []

        expected = {f"task-{event.key}" for event in events}
        outputs = read_all(bus, topics.ENV_BUILT, lambda d: d.key in expected)
        per_task = Counter(d.key for d in outputs)
        assert set(per_task) == expected, f"lost: {sorted(expected - set(per_task))}"
        assert [key for key, count in per_task.items() if count > 1] == []
        assert read_all(bus, topics.dlq(topic), lambda d: True, quiet_s=2) == []
        assert bus.lag(fresh_group, [topic]) == {topic: 0}
        assert worker.stats.dead_lettered == 0
        assert worker.stats.interruptions > 0
        assert outage_began < 30
        assert len(list(store.list(f"state/{service.name}/done/"))) == 30
        assert worker.health.down() == []
    finally:
        s3.stop()
