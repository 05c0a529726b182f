"""Lanes: one per key in its partition, run side by side; a partition commits only up to its
first record that was not handled."""

from __future__ import annotations

import threading
import time

from skillgym_core.bus.base import Delivery
from skillgym_core.lanes import committable, lanes_of, run_lanes


def delivery(offset: int, key: str, partition: int = 0) -> Delivery:
    return Delivery(topic="t", partition=partition, offset=offset, key=key, value=b"")


BATCH = [delivery(0, "a"), delivery(1, "b"), delivery(2, "a"), delivery(0, "a", partition=1), delivery(3, "c")]


def test_lanes_group_by_key_within_a_partition_in_offset_order() -> None:
    assert lanes_of(BATCH) == [[0, 2], [1], [3], [4]]


def test_lanes_run_side_by_side_and_keep_each_keys_order() -> None:
    order: list[tuple[int, str | None, int]] = []
    running, most = 0, 0
    lock = threading.Lock()

    def handle(d: Delivery) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1
            order.append((d.partition, d.key, d.offset))

    handled, failures = run_lanes(BATCH, handle, concurrency=4)
    assert handled == set(range(len(BATCH))) and failures == []
    assert most > 1
    assert [o for p, k, o in order if (p, k) == (0, "a")] == [0, 2]


def test_a_failing_record_stops_its_lane_only() -> None:
    def handle(d: Delivery) -> None:
        if d.key == "a" and d.partition == 0 and d.offset == 0:
            raise RuntimeError("boom")

    handled, failures = run_lanes(BATCH, handle, concurrency=2)
    assert handled == {1, 3, 4} and [str(f) for f in failures] == ["boom"]


def test_a_partition_commits_up_to_its_first_unhandled_record() -> None:
    ready, blocked = committable(BATCH, handled={0, 2, 3, 4})
    assert [(d.partition, d.offset) for d in ready] == [(0, 0), (1, 0)]  # offset 1 (key b) was not handled
    assert blocked == {("t", 0)}
    ready, blocked = committable(BATCH, handled=set(range(5)))
    assert len(ready) == 5 and blocked == set()
