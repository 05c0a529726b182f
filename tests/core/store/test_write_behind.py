"""Writes behind: every object lands, a failed write surfaces at the next wait, reads see every
write before them, and an event batch goes out only once the artifacts it announces are stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.bus.batching import BatchingPublisher
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.errors import StoreUnavailable
from skillgym_core.store.local import LocalStore
from skillgym_core.store.write_behind import WriteBehindStore

from tests.support.faults import FaultyStore


def test_every_write_lands_and_reads_see_them(tmp_path: Path) -> None:
    inner = LocalStore(tmp_path / "store")
    with WriteBehindStore(inner, threads=4, max_pending=8) as store:
        for i in range(50):
            assert store.put_bytes(f"k/{i:03d}", str(i).encode()) == f"k/{i:03d}"
        assert store.get_bytes("k/049") == b"49" and store.exists("k/000")
        assert sorted(store.list("k/")) == [f"k/{i:03d}" for i in range(50)]
    assert store.written == 50


def test_a_failed_write_is_raised_by_the_next_wait(tmp_path: Path) -> None:
    inner = FaultyStore(LocalStore(tmp_path / "store"))
    inner.fail_next("put", prefix="skills/b")
    store = WriteBehindStore(inner)
    store.put_bytes("skills/a", b"1")
    store.put_bytes("skills/b", b"2")
    store.put_bytes("skills/c", b"3")
    with pytest.raises(StoreUnavailable):
        store.wait()
    assert inner.inner.exists("skills/a") and inner.inner.exists("skills/c") and not inner.inner.exists("skills/b")
    store.wait()  # reported once
    store.close()


def test_events_wait_for_the_artifacts_they_announce(tmp_path: Path) -> None:
    inner = FaultyStore(LocalStore(tmp_path / "store"))
    store = WriteBehindStore(inner)
    bus = MemoryBus()
    publisher = BatchingPublisher(bus, batch_size=2, before_flush=store.wait)
    store.put_bytes("skills/one", b"1")
    publisher.add("skill-ingested", "one", b"event one")
    inner.fail_next("put", prefix="skills/two")
    store.put_bytes("skills/two", b"2")
    with pytest.raises(StoreUnavailable):
        publisher.add("skill-ingested", "two", b"event two")
    assert bus.records("skill-ingested") == [] and publisher.pending == 2  # nothing announced
    store.put_bytes("skills/two", b"2")  # written again, as a rerun of ingest would
    publisher.flush()
    assert [d.value for d in bus.records("skill-ingested")] == [b"event one", b"event two"]
    store.close()
