"""MemoryBus keeps Kafka's consumer-group semantics within one process."""

from __future__ import annotations

import threading
import time

from skillgym_core.bus.base import Bus, Outgoing, Subscription
from skillgym_core.bus.memory import MemoryBus


def _values(batch: list) -> list[bytes]:
    return [d.value for d in batch]


def test_implements_the_protocols() -> None:
    bus = MemoryBus()
    assert isinstance(bus, Bus)
    assert isinstance(bus.subscribe(["t"], "g"), Subscription)


def test_records_are_delivered_in_order_with_offsets_and_keys() -> None:
    bus = MemoryBus()
    for i in range(3):
        bus.publish("t", f"k{i}", f"v{i}".encode())
    batch = bus.subscribe(["t"], "g").poll(timeout_s=0)
    assert _values(batch) == [b"v0", b"v1", b"v2"]
    assert [d.offset for d in batch] == [0, 1, 2]
    assert [d.key for d in batch] == ["k0", "k1", "k2"]
    assert {d.topic for d in batch} == {"t"}


def test_max_records_bounds_a_poll() -> None:
    bus = MemoryBus()
    for i in range(5):
        bus.publish("t", None, bytes([i]))
    sub = bus.subscribe(["t"], "g")
    assert len(sub.poll(timeout_s=0, max_records=2)) == 2
    assert len(sub.poll(timeout_s=0, max_records=2)) == 2
    assert len(sub.poll(timeout_s=0, max_records=2)) == 1
    assert sub.poll(timeout_s=0) == []


def test_a_new_subscription_resumes_after_the_committed_offset() -> None:
    bus = MemoryBus()
    for i in range(4):
        bus.publish("t", None, bytes([i]))
    first = bus.subscribe(["t"], "g")
    batch = first.poll(timeout_s=0)
    first.commit(batch[1])
    first.close()
    assert bus.pending("g", ["t"]) == 2

    assert _values(bus.subscribe(["t"], "g").poll(timeout_s=0)) == [bytes([2]), bytes([3])]


def test_uncommitted_records_are_redelivered() -> None:
    bus = MemoryBus()
    bus.publish("t", None, b"a")
    bus.subscribe(["t"], "g").poll(timeout_s=0)
    assert _values(bus.subscribe(["t"], "g").poll(timeout_s=0)) == [b"a"]


def test_commits_never_move_backwards() -> None:
    bus = MemoryBus()
    for i in range(3):
        bus.publish("t", None, bytes([i]))
    sub = bus.subscribe(["t"], "g")
    batch = sub.poll(timeout_s=0)
    sub.commit(batch[2])
    sub.commit(batch[0])
    assert bus.pending("g", ["t"]) == 0


def test_groups_are_independent() -> None:
    bus = MemoryBus()
    bus.publish("t", None, b"a")
    one = bus.subscribe(["t"], "one")
    one.commit(one.poll(timeout_s=0)[0])
    assert _values(bus.subscribe(["t"], "two").poll(timeout_s=0)) == [b"a"]
    assert bus.pending("one", ["t"]) == 0
    assert bus.pending("two", ["t"]) == 1


def test_from_latest_skips_existing_records() -> None:
    bus = MemoryBus()
    bus.publish("t", None, b"old")
    sub = bus.subscribe(["t"], "g", from_beginning=False)
    bus.publish("t", None, b"new")
    assert _values(sub.poll(timeout_s=0)) == [b"new"]


def test_one_subscription_reads_several_topics() -> None:
    bus = MemoryBus()
    bus.publish("a", None, b"1")
    bus.publish("b", None, b"2")
    batch = bus.subscribe(["a", "b"], "g").poll(timeout_s=0)
    assert {(d.topic, d.value) for d in batch} == {("a", b"1"), ("b", b"2")}


def test_poll_waits_for_a_publish() -> None:
    bus = MemoryBus()
    sub = bus.subscribe(["t"], "g")
    publisher = threading.Timer(0.1, bus.publish, args=("t", None, b"late"))
    started = time.monotonic()
    publisher.start()
    batch = sub.poll(timeout_s=5)
    publisher.join()
    assert _values(batch) == [b"late"]
    assert time.monotonic() - started < 4


def test_poll_times_out_empty() -> None:
    started = time.monotonic()
    assert MemoryBus().subscribe(["t"], "g").poll(timeout_s=0.2) == []
    assert time.monotonic() - started >= 0.15


def test_rewind_goes_back_to_the_last_commit() -> None:
    bus = MemoryBus()
    for i in range(5):
        bus.publish("t", None, bytes([i]))
    sub = bus.subscribe(["t"], "g")
    batch = sub.poll(timeout_s=0)
    sub.commit(batch[1])

    sub.rewind([("t", 0)])

    assert _values(sub.poll(timeout_s=0)) == [bytes([2]), bytes([3]), bytes([4])]


def test_rewind_with_nothing_committed_goes_back_to_where_the_group_started() -> None:
    bus = MemoryBus()
    bus.publish("t", None, b"old")
    sub = bus.subscribe(["t"], "g", from_beginning=False)
    bus.publish("t", None, b"new")
    assert _values(sub.poll(timeout_s=0)) == [b"new"]

    sub.rewind([("t", 0), ("not-subscribed", 0)])

    assert _values(sub.poll(timeout_s=0)) == [b"new"]


def test_backlog_and_lag_count_what_is_not_read_or_not_committed() -> None:
    bus = MemoryBus()
    for i in range(3):
        bus.publish("a", None, bytes([i]))
    sub = bus.subscribe(["a", "b"], "g")
    assert sub.backlog() == {("a", 0): 3, ("b", 0): 0}
    batch = sub.poll(timeout_s=0, max_records=2)
    sub.commit(batch[0])
    assert sub.backlog() == {("a", 0): 1, ("b", 0): 0}
    assert bus.lag("g", ["a", "b"]) == {"a": 2, "b": 0}


def test_headers_travel_with_the_record_and_default_to_none() -> None:
    bus = MemoryBus()
    bus.publish("t", "k", b"v", (("ce_id", b"1"), ("ce_id", b"2"), ("content-type", b"application/json")))
    bus.publish_many([Outgoing("t", "k", b"w", (("ce_type", b"x"),)), Outgoing("t", "k", b"z")])
    first, second, third = bus.subscribe(["t"], "g").poll(timeout_s=0)
    assert first.headers == (("ce_id", b"1"), ("ce_id", b"2"), ("content-type", b"application/json"))
    assert first.header("ce_id") == b"2" and first.header("ce_time") is None
    assert second.headers == (("ce_type", b"x"),) and third.headers == ()
