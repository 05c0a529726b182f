"""The bus Protocol. Delivery is at-least-once: a consumer commits only after its handler
finished and its outputs were published; redelivery is harmless because handlers are
idempotent (content-derived ids)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Delivery:
    """One raw record as read from a topic; the envelope is parsed by the worker so that
    unparseable records can be routed to the DLQ rather than crash the consumer."""

    topic: str
    partition: int
    offset: int
    key: str | None
    value: bytes


@runtime_checkable
class Subscription(Protocol):
    def poll(self, timeout_s: float = 1.0, max_records: int = 100) -> list[Delivery]: ...

    def commit(self, delivery: Delivery) -> None:
        """Mark everything up to and including ``delivery`` in its partition as done."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Bus(Protocol):
    def publish(self, topic: str, key: str | None, value: bytes) -> None:
        """Durably append one record (returns once the broker acknowledged it)."""
        ...

    def subscribe(self, topics: Sequence[str], group: str, *, from_beginning: bool = True) -> Subscription: ...

    def ensure_topics(self, topics: Sequence[str]) -> None: ...

    def close(self) -> None: ...
