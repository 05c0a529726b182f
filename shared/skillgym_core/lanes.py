"""Records of one polled batch handled side by side: one lane per key (in its partition), so the
records of one entity keep their order while different entities run concurrently; afterwards
each partition commits only up to its first record that was not handled."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor

from skillgym_core.bus.base import Delivery, TopicPartition

LaneKey = tuple[str, int, str | None]


def lanes_of(batch: Sequence[Delivery]) -> list[list[int]]:
    """Indices into ``batch`` grouped by (topic, partition, key), each group in offset order."""
    lanes: dict[LaneKey, list[int]] = {}
    for index, delivery in enumerate(batch):
        lanes.setdefault((delivery.topic, delivery.partition, delivery.key), []).append(index)
    return list(lanes.values())


def run_lanes(batch: Sequence[Delivery], handle: Callable[[Delivery], None], concurrency: int
              ) -> tuple[set[int], list[BaseException]]:
    """Handle every lane on up to ``concurrency`` threads; a lane stops at its first failure (the
    records after it wait, keeping the key's order). Returns the handled indices and the failures
    in batch order."""
    handled: set[int] = set()
    failures: dict[int, BaseException] = {}

    def lane(indices: list[int]) -> None:
        for index in indices:
            try:
                handle(batch[index])
            except Exception as exc:  # reported to the caller, which decides
                failures[index] = exc
                return
            handled.add(index)

    lanes = lanes_of(batch)
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(lanes))), thread_name_prefix="lane") as pool:
        for future in [pool.submit(lane, indices) for indices in lanes]:
            future.result()
    return handled, [failures[index] for index in sorted(failures)]


def committable(batch: Sequence[Delivery], handled: Collection[int]) -> tuple[list[Delivery], set[TopicPartition]]:
    """The records each partition may commit (those before its first unhandled record) and the
    partitions that hold an unhandled record, which must be read again from their commit."""
    ready: list[Delivery] = []
    blocked: set[TopicPartition] = set()
    for index in sorted(range(len(batch)), key=lambda i: (batch[i].topic, batch[i].partition, batch[i].offset)):
        delivery = batch[index]
        if delivery.topic_partition in blocked:
            continue
        if index in handled:
            ready.append(delivery)
        else:
            blocked.add(delivery.topic_partition)
    return ready, blocked
