"""Fault injection for the Store and Bus protocols: wrappers around a real store or bus that
fail chosen operations on demand, with the typed errors the S3 store and the Kafka bus raise
when their server is unreachable."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Collection, Iterator, Sequence

from skillgym_core.bus.base import Bus, Delivery, Headers, Outgoing, Subscription, TopicPartition
from skillgym_core.errors import DependencyUnavailable, StoreUnavailable, TransientError
from skillgym_core.store.base import Store


class _Faults:
    """Which operations fail next: ``down`` fails them all; ``fail_next`` a counted few."""

    def __init__(self) -> None:
        self.down = False
        self._lock = threading.Lock()
        self._planned: list[tuple[str, str, int]] = []  # operation, target prefix, calls left
        self.injected: Counter[str] = Counter()

    def fail_next(self, operation: str, times: int = 1, prefix: str = "") -> None:
        with self._lock:
            self._planned.append((operation, prefix, times))

    def should_fail(self, operation: str, target: str) -> bool:
        with self._lock:
            if self.down:
                self.injected[operation] += 1
                return True
            for index, (planned, prefix, left) in enumerate(self._planned):
                if planned == operation and target.startswith(prefix):
                    if left <= 1:
                        del self._planned[index]
                    else:
                        self._planned[index] = (planned, prefix, left - 1)
                    self.injected[operation] += 1
                    return True
            return False


class FaultyStore(_Faults):
    def __init__(self, inner: Store) -> None:
        super().__init__()
        self.inner = inner

    def _check(self, operation: str, key: str) -> None:
        if self.should_fail(operation, key):
            raise StoreUnavailable(
                f"S3 {operation} failed: connection refused", endpoint="faulty", key=key, action=operation
            )

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        self._check("put", key)
        return self.inner.put_bytes(key, data, content_type)

    def get_bytes(self, key: str) -> bytes:
        self._check("get", key)
        return self.inner.get_bytes(key)

    def exists(self, key: str) -> bool:
        self._check("exists", key)
        return self.inner.exists(key)

    def list(self, prefix: str = "") -> Iterator[str]:
        self._check("list", prefix)
        return self.inner.list(prefix)

    def delete(self, key: str) -> None:
        self._check("delete", key)
        self.inner.delete(key)

    def describe(self) -> str:
        return f"faulty+{self.inner.describe()}"


class FaultyBus(_Faults):
    """Publishing fails like KafkaBus (a TransientError); commits like KafkaSubscription."""

    def __init__(self, inner: Bus) -> None:
        super().__init__()
        self.inner = inner

    def publish(self, topic: str, key: str | None, value: bytes, headers: Headers = ()) -> None:
        if self.should_fail("publish", topic):
            raise TransientError(f"kafka publish failed: broker down ({topic})", action="publish", topic=topic)
        self.inner.publish(topic, key, value, headers)

    def publish_many(self, records: Sequence[Outgoing]) -> None:
        for record in records:  # a failure leaves the records before it published, as Kafka may
            self.publish(record.topic, record.key, record.value, record.headers)

    def subscribe(self, topics: Sequence[str], group: str, *, from_beginning: bool = True) -> Subscription:
        return FaultySubscription(self.inner.subscribe(topics, group, from_beginning=from_beginning), self)

    def ensure_topics(self, topics: Sequence[str]) -> None:
        self.inner.ensure_topics(topics)

    def lag(self, group: str, topics: Sequence[str]) -> dict[str, int]:
        if self.should_fail("lag", ""):
            raise TransientError("kafka lag failed: broker down", action="lag")
        lag_of = getattr(self.inner, "lag", None)
        return dict(lag_of(group, topics)) if lag_of else {}

    def close(self) -> None:
        self.inner.close()


class FaultySubscription:
    def __init__(self, inner: Subscription, faults: _Faults) -> None:
        self.inner = inner
        self.faults = faults

    def poll(self, timeout_s: float = 1.0, max_records: int = 100) -> list[Delivery]:
        if self.faults.should_fail("poll", ""):
            raise DependencyUnavailable("kafka poll failed: broker down", dependency="broker", action="poll")
        return self.inner.poll(timeout_s, max_records)

    def commit(self, delivery: Delivery) -> None:
        if self.faults.should_fail("commit", delivery.topic):
            raise DependencyUnavailable("kafka commit failed: broker down", dependency="broker", action="commit")
        self.inner.commit(delivery)

    def commit_batch(self, deliveries: Sequence[Delivery]) -> None:
        if deliveries and self.faults.should_fail("commit", deliveries[0].topic):
            raise DependencyUnavailable("kafka commit failed: broker down", dependency="broker", action="commit")
        self.inner.commit_batch(deliveries)

    def rewind(self, partitions: Collection[TopicPartition]) -> None:
        self.inner.rewind(partitions)

    def backlog(self) -> dict[TopicPartition, int]:
        return self.inner.backlog()

    def close(self) -> None:
        self.inner.close()
