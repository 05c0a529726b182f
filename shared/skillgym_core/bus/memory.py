"""An in-process bus with Kafka's semantics: per-topic logs (one partition each), consumer
groups with committed offsets, redelivery of uncommitted records to the next subscription of
the group or after a rewind."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Collection, Sequence

from skillgym_core.bus.base import Delivery, Headers, Outgoing, TopicPartition, highest_per_partition


class MemoryBus:
    def __init__(self) -> None:
        self._logs: dict[str, list[Delivery]] = defaultdict(list)
        self._committed: dict[tuple[str, str], int] = {}
        self._lock = threading.Condition()

    def publish(self, topic: str, key: str | None, value: bytes, headers: Headers = ()) -> None:
        with self._lock:
            log = self._logs[topic]
            log.append(Delivery(topic=topic, partition=0, offset=len(log), key=key, value=value, headers=tuple(headers)))
            self._lock.notify_all()

    def publish_many(self, records: Sequence[Outgoing]) -> None:
        for record in records:
            self.publish(record.topic, record.key, record.value, record.headers)

    def subscribe(self, topics: Sequence[str], group: str, *, from_beginning: bool = True) -> MemorySubscription:
        with self._lock:
            for topic in topics:
                if not from_beginning:
                    self._committed.setdefault((group, topic), len(self._logs[topic]))
        return MemorySubscription(self, list(topics), group)

    def ensure_topics(self, topics: Sequence[str]) -> None:
        with self._lock:
            for topic in topics:
                self._logs.setdefault(topic, [])

    def records(self, topic: str) -> list[Delivery]:
        with self._lock:
            return list(self._logs.get(topic, []))

    def pending(self, group: str, topics: Sequence[str]) -> int:
        with self._lock:
            return sum(len(self._logs[t]) - self._committed.get((group, t), 0) for t in topics)

    def lag(self, group: str, topics: Sequence[str]) -> dict[str, int]:
        """Records per topic that ``group`` has not committed yet."""
        with self._lock:
            return {t: len(self._logs[t]) - self._committed.get((group, t), 0) for t in topics}

    def close(self) -> None:
        pass


class MemorySubscription:
    def __init__(self, bus: MemoryBus, topics: list[str], group: str) -> None:
        self._bus = bus
        self._topics = topics
        self._group = group
        self._position = {t: bus._committed.get((group, t), 0) for t in topics}

    def poll(self, timeout_s: float = 1.0, max_records: int = 100) -> list[Delivery]:
        with self._bus._lock:
            batch = self._take(max_records)
            if not batch and timeout_s > 0:
                self._bus._lock.wait(timeout_s)
                batch = self._take(max_records)
            return batch

    def _take(self, max_records: int) -> list[Delivery]:
        batch: list[Delivery] = []
        for topic in self._topics:
            log = self._bus._logs[topic]
            start = self._position[topic]
            chunk = log[start : start + max_records - len(batch)]
            batch.extend(chunk)
            self._position[topic] = start + len(chunk)
            if len(batch) >= max_records:
                break
        return batch

    def commit(self, delivery: Delivery) -> None:
        self.commit_batch([delivery])

    def commit_batch(self, deliveries: Sequence[Delivery]) -> None:
        with self._bus._lock:
            for (topic, _), end in highest_per_partition(deliveries).items():
                key = (self._group, topic)
                self._bus._committed[key] = max(self._bus._committed.get(key, 0), end)

    def rewind(self, partitions: Collection[TopicPartition]) -> None:
        with self._bus._lock:
            for topic, _ in partitions:
                if topic in self._position:
                    self._position[topic] = self._bus._committed.get((self._group, topic), 0)

    def backlog(self) -> dict[TopicPartition, int]:
        with self._bus._lock:
            return {(t, 0): len(self._bus._logs[t]) - self._position[t] for t in self._topics}

    def close(self) -> None:
        pass
