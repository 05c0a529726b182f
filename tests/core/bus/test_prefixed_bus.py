"""PrefixedBus hides its prefix from services: topics, groups, rewinds and backlogs."""

from __future__ import annotations

from skillgym_core.bus.base import Outgoing, Subscription
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.bus.prefixed import PrefixedBus


def test_rewind_and_backlog_speak_plain_topic_names() -> None:
    inner = MemoryBus()
    bus = PrefixedBus(inner, "run1.")
    for i in range(3):
        bus.publish("t", None, bytes([i]))
    sub = bus.subscribe(["t"], "g")
    assert isinstance(sub, Subscription)

    batch = sub.poll(timeout_s=0)
    assert [d.topic for d in batch] == ["t", "t", "t"]
    sub.commit(batch[0])
    assert sub.backlog() == {("t", 0): 0}

    sub.rewind([("t", 0)])

    assert sub.backlog() == {("t", 0): 2}
    assert [d.value for d in sub.poll(timeout_s=0)] == [bytes([1]), bytes([2])]
    assert inner.pending("run1.g", ["run1.t"]) == 2
    assert bus.lag("g", ["t"]) == {"t": 2}


def test_headers_pass_through_the_prefix() -> None:
    inner = MemoryBus()
    bus = PrefixedBus(inner, "run1.")
    bus.publish("t", "k", b"one", (("ce_id", b"1"),))
    bus.publish_many([Outgoing("t", "k", b"two", (("ce_id", b"2"),))])
    assert [d.headers for d in inner.records("run1.t")] == [(("ce_id", b"1"),), (("ce_id", b"2"),)]
    assert [d.header("ce_id") for d in bus.subscribe(["t"], "g").poll(timeout_s=0)] == [b"1", b"2"]
