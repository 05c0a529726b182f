"""KafkaBus against a real single-node Kafka: acks, groups, commits, redelivery, partitions, lag."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from kafka.errors import KafkaTimeoutError  # type: ignore[import-untyped,unused-ignore]
from skillgym_core.bus.base import Bus, Delivery, Outgoing, Subscription
from skillgym_core.bus.kafka import KafkaBus, KafkaSubscription, with_dlqs
from skillgym_core.errors import TransientError

from tests.support.services import KafkaServer

BusFactory = Callable[..., KafkaBus]


def new_topic() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def poll_until(sub: Subscription, count: int, timeout_s: float = 30.0) -> list[Delivery]:
    got: list[Delivery] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        got.extend(sub.poll(timeout_s=0.5))
    return got


def poll_quietly(sub: Subscription, seconds: float) -> list[Delivery]:
    got: list[Delivery] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got.extend(sub.poll(timeout_s=0.3))
    return got


@pytest.fixture
def make_bus(kafka: KafkaServer) -> Iterator[BusFactory]:
    buses: list[KafkaBus] = []

    def factory(**options: int) -> KafkaBus:
        bus = KafkaBus(kafka.bootstrap, session_timeout_ms=6000, heartbeat_interval_ms=1000, **options)
        buses.append(bus)
        return bus

    yield factory
    for bus in buses:
        bus.close()


def test_with_dlqs_adds_one_dead_letter_topic_each() -> None:
    assert with_dlqs(["a", "b", "a.dlq", "a"]) == ["a", "a.dlq", "b", "b.dlq"]


def test_unreachable_broker_is_a_typed_transient_error() -> None:
    bus = KafkaBus("127.0.0.1:1", request_timeout_ms=1500, publish_timeout_s=2)
    started = time.monotonic()
    with pytest.raises(TransientError) as caught:
        bus.publish("t", None, b"x")
    assert caught.value.details["bootstrap"] == "127.0.0.1:1"
    assert caught.value.reason == "transient"
    assert time.monotonic() - started < 20
    with pytest.raises(TransientError):
        bus.ensure_topics(["t"])
    bus.close()


@pytest.mark.integration
def test_ensure_topics_creates_topics_and_dlqs_idempotently(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=3)
    topic = new_topic()
    assert isinstance(bus, Bus)

    bus.ensure_topics([topic])
    bus.ensure_topics([topic, f"{topic}.dlq"])

    assert bus.lag(fresh_group, [topic, f"{topic}.dlq"]) == {topic: 0, f"{topic}.dlq": 0}
    admin = bus._admin()
    described = {row["name"]: row for row in admin.describe_topics([topic, f"{topic}.dlq"])}
    assert {name: len(row["partitions"]) for name, row in described.items()} == {topic: 3, f"{topic}.dlq": 3}
    assert f"{topic}.dlq.dlq" not in admin.list_topics()


@pytest.mark.integration
def test_publish_then_consume_with_keys_and_partitions(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=3)
    topic = new_topic()
    bus.ensure_topics([topic])
    sent = [(f"key-{i % 4}", f"value-{i}".encode()) for i in range(12)]
    for key, value in sent:
        bus.publish(topic, key, value)
    bus.publish(topic, None, b"no key")

    sub = bus.subscribe([topic], fresh_group)
    assert isinstance(sub, Subscription)
    got = poll_until(sub, len(sent) + 1)
    sub.close()

    assert sorted((d.key, d.value) for d in got if d.key) == sorted(sent)
    assert [d.value for d in got if d.key is None] == [b"no key"]
    partition_of_key: dict[str, set[int]] = {}
    for d in got:
        if d.key:
            partition_of_key.setdefault(d.key, set()).add(d.partition)
    assert all(len(parts) == 1 for parts in partition_of_key.values())
    per_key = [d.value for d in got if d.key == "key-1"]
    assert per_key == [b"value-1", b"value-5", b"value-9"]


@pytest.mark.integration
def test_commit_then_resume_continues_after_the_committed_offset(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=1)
    topic = new_topic()
    bus.ensure_topics([topic])
    for i in range(6):
        bus.publish(topic, "k", f"m{i}".encode())
    assert bus.lag(fresh_group, [topic]) == {topic: 6}

    first = bus.subscribe([topic], fresh_group)
    got = poll_until(first, 6)
    assert [d.value for d in got] == [f"m{i}".encode() for i in range(6)]
    first.commit(got[2])
    first.close()
    assert bus.lag(fresh_group, [topic]) == {topic: 3}

    resumed = bus.subscribe([topic], fresh_group)
    rest = poll_until(resumed, 3)
    assert [d.value for d in rest] == [b"m3", b"m4", b"m5"]
    assert [d.offset for d in rest] == [3, 4, 5]
    resumed.commit(rest[-1])
    assert bus.lag(fresh_group, [topic]) == {topic: 0}
    assert poll_quietly(resumed, 1.0) == []
    resumed.close()


@pytest.mark.integration
def test_uncommitted_records_are_redelivered(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=2)
    topic = new_topic()
    bus.ensure_topics([topic])
    for i in range(4):
        bus.publish(topic, f"k{i}", f"m{i}".encode())

    first = bus.subscribe([topic], fresh_group)
    assert len(poll_until(first, 4)) == 4
    first.close()

    again = bus.subscribe([topic], fresh_group)
    assert sorted(d.value for d in poll_until(again, 4)) == [b"m0", b"m1", b"m2", b"m3"]
    again.close()


@pytest.mark.integration
def test_from_latest_skips_earlier_records(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=1)
    topic = new_topic()
    bus.ensure_topics([topic])
    bus.publish(topic, None, b"old")
    sub = bus.subscribe([topic], fresh_group, from_beginning=False)
    poll_quietly(sub, 2.0)  # join the group and fix the starting position
    bus.publish(topic, None, b"new")
    assert [d.value for d in poll_until(sub, 1)] == [b"new"]
    sub.close()


@pytest.mark.integration
def test_rewind_redelivers_everything_after_the_last_commit(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=2)
    topic = new_topic()
    bus.ensure_topics([topic])
    for i in range(6):
        bus.publish(topic, "k", f"m{i}".encode())
    bus.publish(topic, "other-key", b"elsewhere")
    sub = bus.subscribe([topic], fresh_group)
    got = poll_until(sub, 7)
    partition = next(d.partition for d in got if d.key == "k")
    sub.commit(next(d for d in got if d.value == b"m1"))
    assert poll_quietly(sub, 1.0) == []
    assert sub.backlog()[(topic, partition)] == 0

    sub.rewind([(topic, partition)])

    assert sub.backlog()[(topic, partition)] == 4
    again = poll_until(sub, 4)
    assert [d.value for d in again] == [b"m2", b"m3", b"m4", b"m5"]
    assert poll_quietly(sub, 1.0) == []  # the other partition was not rewound
    sub.close()


@pytest.mark.integration
def test_rewind_with_nothing_committed_respects_where_the_group_started(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=1)
    topic = new_topic()
    bus.ensure_topics([topic])
    bus.publish(topic, None, b"old")
    sub = bus.subscribe([topic], fresh_group, from_beginning=False)
    poll_quietly(sub, 2.0)
    bus.publish(topic, None, b"new-1")
    bus.publish(topic, None, b"new-2")
    assert [d.value for d in poll_until(sub, 2)] == [b"new-1", b"new-2"]

    sub.rewind([(topic, 0), ("not-assigned", 0)])

    assert [d.value for d in poll_until(sub, 2)] == [b"new-1", b"new-2"]
    sub.close()


@pytest.mark.integration
def test_rewind_without_the_broker_uses_this_members_own_commits(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=1)
    topic = new_topic()
    bus.ensure_topics([topic])
    for i in range(3):
        bus.publish(topic, None, f"m{i}".encode())
    sub = bus.subscribe([topic], fresh_group)
    assert isinstance(sub, KafkaSubscription)
    got = poll_until(sub, 3)
    sub.commit(got[0])

    def unreachable(*args: object, **kwargs: object) -> None:
        raise KafkaTimeoutError("coordinator not available")

    sub._consumer.committed = unreachable
    sub.rewind([(topic, 0)])

    assert [d.value for d in poll_until(sub, 2)] == [b"m1", b"m2"]
    sub.close()


def _assignments_settle(subs: list[KafkaSubscription], partitions: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for sub in subs:
            assert sub.poll(timeout_s=0.3) == []
        owned = [sub.assignment() for sub in subs]
        if all(owned) and sum(len(o) for o in owned) == partitions and not owned[0] & owned[1]:
            return
    raise AssertionError(f"group never settled: {[sub.assignment() for sub in subs]}")


@pytest.mark.integration
def test_two_consumers_in_one_group_split_the_partitions(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=4)
    topic = new_topic()
    bus.ensure_topics([topic])
    subs = [bus.subscribe([topic], fresh_group), bus.subscribe([topic], fresh_group)]
    _assignments_settle(subs, partitions=4)

    sent = {f"m{i}".encode() for i in range(40)}
    for i, value in enumerate(sorted(sent)):
        bus.publish(topic, f"key-{i}", value)

    received: list[list[Delivery]] = [[], []]
    deadline = time.monotonic() + 30
    while sum(map(len, received)) < len(sent) and time.monotonic() < deadline:
        for index, sub in enumerate(subs):
            received[index].extend(sub.poll(timeout_s=0.3))

    assert all(received), "both members should receive records"
    for sub, got in zip(subs, received, strict=True):
        assert {(d.topic, d.partition) for d in got} <= sub.assignment()
    values = [d.value for got in received for d in got]
    assert sorted(values) == sorted(sent)
    for sub in subs:
        sub.close()


@pytest.mark.integration
def test_headers_reach_the_consumer_in_order_from_both_publish_paths(make_bus: BusFactory, fresh_group: str) -> None:
    bus = make_bus(partitions=1)
    topic = new_topic()
    bus.ensure_topics([topic])
    headers = (("ce_specversion", b"1.0"), ("ce_id", b"evt-1"), ("content-type", b"application/json"))
    bus.publish(topic, "k", b"one", headers)
    bus.publish_many([Outgoing(topic, "k", b"two", headers[:1]), Outgoing(topic, "k", b"three")])

    sub = bus.subscribe([topic], fresh_group)
    got = poll_until(sub, 3)
    sub.close()

    assert [(d.value, d.headers) for d in got] == [(b"one", headers), (b"two", headers[:1]), (b"three", ())]
