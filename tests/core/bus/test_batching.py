"""Publishing in batches: every record reaches the bus in order, a failed batch stays pending and
is published again by the next flush, and what was added before an error still goes out."""

from __future__ import annotations

import pytest
from skillgym_core.bus.batching import BatchingPublisher
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.errors import TransientError

from tests.support.faults import FaultyBus


def test_records_go_out_a_batch_at_a_time_and_the_rest_on_exit() -> None:
    memory = MemoryBus()
    with BatchingPublisher(memory, batch_size=3) as publisher:
        for i in range(7):
            publisher.add("t", f"k{i % 2}", str(i).encode())
            assert len(memory.records("t")) == (i + 1) // 3 * 3
    assert [d.value for d in memory.records("t")] == [str(i).encode() for i in range(7)]
    assert publisher.published == 7 and publisher.pending == 0


def test_a_failed_batch_is_kept_and_published_again() -> None:
    memory = MemoryBus()
    bus = FaultyBus(memory)
    publisher = BatchingPublisher(bus, batch_size=2)
    publisher.add("t", "a", b"1")
    bus.fail_next("publish", prefix="t")
    with pytest.raises(TransientError):
        publisher.add("t", "a", b"2")
    assert publisher.pending == 2 and publisher.published == 0
    publisher.flush()
    values = [d.value for d in memory.records("t")]
    assert values[-2:] == [b"1", b"2"] and set(values) == {b"1", b"2"}  # a repeat, never a loss
    assert publisher.pending == 0 and publisher.published == 2


def test_what_was_added_before_a_failure_still_goes_out() -> None:
    memory = MemoryBus()
    with pytest.raises(RuntimeError), BatchingPublisher(memory, batch_size=10) as publisher:
        publisher.add("t", None, b"x")
        raise RuntimeError("ingest failed")
    assert [d.value for d in memory.records("t")] == [b"x"] and publisher.pending == 0


def test_headers_are_published_with_their_records() -> None:
    memory = MemoryBus()
    with BatchingPublisher(memory, batch_size=2) as publisher:
        publisher.add("t", "k", b"a", (("ce_id", b"1"),))
        publisher.add("t", "k", b"b")
    assert [(d.value, d.headers) for d in memory.records("t")] == [(b"a", (("ce_id", b"1"),)), (b"b", ())]
