"""The bus Protocol. Delivery is at-least-once: a consumer commits only after its handler
finished and its outputs were published, and after any failure it rewinds to its last commit
so nothing polled is passed over; redelivery is harmless because handlers are idempotent
(content-derived ids)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

TopicPartition = tuple[str, int]
# Kafka record headers: (name, value) pairs in order; a name may repeat.
Headers = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class Delivery:
    """One raw record as read from a topic; the envelope is parsed by the worker so that
    unparseable records can be routed to the DLQ rather than crash the consumer."""

    topic: str
    partition: int
    offset: int
    key: str | None
    value: bytes
    headers: Headers = ()

    @property
    def topic_partition(self) -> TopicPartition:
        return (self.topic, self.partition)

    def header(self, name: str) -> bytes | None:
        """The value of the last header called ``name`` (None when there is none)."""
        return header_value(self.headers, name)


@dataclass(frozen=True)
class Outgoing:
    """One record to publish."""

    topic: str
    key: str | None
    value: bytes
    headers: Headers = ()


def header_value(headers: Headers, name: str) -> bytes | None:
    """The value of the last header called ``name`` in ``headers`` (None when there is none)."""
    found = None
    for header, value in headers:
        if header == name:
            found = value
    return found


def highest_per_partition(deliveries: Sequence[Delivery]) -> dict[TopicPartition, int]:
    """The offset to commit per partition (the one after its last delivery) for ``deliveries``."""
    ends: dict[TopicPartition, int] = {}
    for delivery in deliveries:
        ends[delivery.topic_partition] = max(ends.get(delivery.topic_partition, 0), delivery.offset + 1)
    return ends


@runtime_checkable
class Subscription(Protocol):
    def poll(self, timeout_s: float = 1.0, max_records: int = 100) -> list[Delivery]: ...

    def commit(self, delivery: Delivery) -> None:
        """Mark everything up to and including ``delivery`` in its partition as done."""
        ...

    def commit_batch(self, deliveries: Sequence[Delivery]) -> None:
        """Mark, in each partition, everything up to and including its last delivery in
        ``deliveries`` as done, in one request."""
        ...

    def rewind(self, partitions: Collection[TopicPartition]) -> None:
        """Move the read position of each (topic, partition) back to its last committed offset
        (with nothing committed: to where this group started reading it), so the next poll
        delivers again every record not yet committed there. Partitions this member no longer
        owns are left alone: their new owner resumes at the commit."""
        ...

    def backlog(self) -> dict[TopicPartition, int]:
        """Records waiting on each partition this member owns: appended but not yet read past
        (between batches, when every polled record is committed or rewound: not yet committed)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Bus(Protocol):
    def publish(self, topic: str, key: str | None, value: bytes, headers: Headers = ()) -> None:
        """Durably append one record (returns once the broker acknowledged it)."""
        ...

    def publish_many(self, records: Sequence[Outgoing]) -> None:
        """Durably append every record, the records of one key in their order; returns once the
        broker acknowledged all of them. On failure it raises once every record was either
        acknowledged or failed; the caller publishes the batch again (content-derived event ids
        make the repeats harmless)."""
        ...

    def subscribe(self, topics: Sequence[str], group: str, *, from_beginning: bool = True) -> Subscription: ...

    def ensure_topics(self, topics: Sequence[str]) -> None: ...

    def close(self) -> None: ...
