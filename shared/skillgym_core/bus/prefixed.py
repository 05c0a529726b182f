"""Namespacing for a shared broker: every topic and consumer group gets a prefix, invisible to
the services (deliveries come back with the plain topic name)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from skillgym_core.bus.base import Bus, Delivery, Headers, Outgoing, Subscription, TopicPartition


class PrefixedSubscription:
    def __init__(self, inner: Subscription, prefix: str) -> None:
        self._inner = inner
        self._prefix = prefix

    def poll(self, timeout_s: float = 1.0, max_records: int = 100) -> list[Delivery]:
        return [
            replace(d, topic=d.topic.removeprefix(self._prefix))
            for d in self._inner.poll(timeout_s=timeout_s, max_records=max_records)
        ]

    def commit(self, delivery: Delivery) -> None:
        self._inner.commit(replace(delivery, topic=self._prefix + delivery.topic))

    def commit_batch(self, deliveries: Sequence[Delivery]) -> None:
        self._inner.commit_batch([replace(d, topic=self._prefix + d.topic) for d in deliveries])

    def rewind(self, partitions: Collection[TopicPartition]) -> None:
        self._inner.rewind([(self._prefix + topic, partition) for topic, partition in partitions])

    def backlog(self) -> dict[TopicPartition, int]:
        return {
            (topic.removeprefix(self._prefix), partition): waiting
            for (topic, partition), waiting in self._inner.backlog().items()
        }

    def close(self) -> None:
        self._inner.close()


class PrefixedBus:
    def __init__(self, inner: Bus, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix

    def publish(self, topic: str, key: str | None, value: bytes, headers: Headers = ()) -> None:
        self.inner.publish(self.prefix + topic, key, value, headers)

    def publish_many(self, records: Sequence[Outgoing]) -> None:
        self.inner.publish_many([replace(r, topic=self.prefix + r.topic) for r in records])

    def subscribe(self, topics: Sequence[str], group: str, *, from_beginning: bool = True) -> Subscription:
        inner = self.inner.subscribe([self.prefix + t for t in topics], self.prefix + group, from_beginning=from_beginning)
        return PrefixedSubscription(inner, self.prefix)

    def ensure_topics(self, topics: Sequence[str]) -> None:
        self.inner.ensure_topics([self.prefix + t for t in topics])

    def lag(self, group: str, topics: Sequence[str]) -> dict[str, int]:
        lag_of = getattr(self.inner, "lag", None)
        if lag_of is None:
            return {}
        lags: dict[str, int] = lag_of(self.prefix + group, [self.prefix + t for t in topics])
        return {topic.removeprefix(self.prefix): value for topic, value in lags.items()}

    def close(self) -> None:
        self.inner.close()
