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
    with pytest.raises(StoreUnavailable):
        store.wait()  # still missing: a retried flush must not go on as if it were stored
    store.put_bytes("skills/b", b"2")
    store.wait()
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
    with pytest.raises(StoreUnavailable):
        publisher.flush()  # as the publisher's exit does after a failure: still nothing announced
    assert bus.records("skill-ingested") == []
    store.put_bytes("skills/two", b"2")  # written again, as a rerun of ingest would
    publisher.flush()
    assert [d.value for d in bus.records("skill-ingested")] == [b"event one", b"event two"]
    store.close()


class CountingSyncs(LocalStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.syncs = 0

    def sync(self) -> None:
        self.syncs += 1
        super().sync()


def test_a_deferring_store_is_synced_once_per_wait_not_per_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = CountingSyncs(tmp_path / "store")
    fsyncs: list[int] = []
    monkeypatch.setattr("skillgym_core.store.local.os.fsync", fsyncs.append)
    with WriteBehindStore(inner, threads=4) as store:
        for i in range(20):
            store.put_bytes(f"skills/s{i}/files.tar.gz", b"x" * i)
        store.wait()
        assert inner.syncs == 1 and fsyncs == [], "no fsync per object; one sync for the batch"
        store.wait()
        assert inner.syncs == 1, "nothing new written: nothing to sync"
    assert [inner.get_bytes(f"skills/s{i}/files.tar.gz") for i in (0, 19)] == [b"", b"x" * 19]
    assert not [p for p in (tmp_path / "store").rglob(".tmp-*")], "no temporary file is left"
    inner.put_bytes("direct", b"d")
    assert len(fsyncs) == 1, "a direct put is durable on return"
