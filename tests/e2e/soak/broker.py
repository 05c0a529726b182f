"""What the soak reads off the broker, straight through kafka-python (the project's bus hides
record timestamps and offsets): every record of a run's topics, and how far each consumer group
has committed."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from kafka import KafkaConsumer  # type: ignore[import-untyped,unused-ignore]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped,unused-ignore]
from kafka.errors import KafkaError  # type: ignore[import-untyped,unused-ignore]
from kafka.structs import TopicPartition  # type: ignore[import-untyped,unused-ignore]
from skillgym_core.bus.base import Headers
from skillgym_core.bus.letters import decode_headers
from skillgym_core.contracts.cloudevents import from_record
from skillgym_core.contracts.topics import DLQ_SUFFIX
from skillgym_core.errors import PoisonEventError


@dataclass(frozen=True)
class Record:
    topic: str  # without the run's prefix
    partition: int
    offset: int
    timestamp: float  # seconds since the epoch, as the producer stamped it
    event_id: str  # on a dead-letter topic: the id of the event the dead letter carries
    payload: dict[str, Any]


def _event_of(raw: bytes, headers: Headers) -> tuple[str, dict[str, Any]]:
    """The event id and payload of an event in any format; for a record that holds none, an id
    from the digest of its bytes."""
    try:
        event = from_record(raw, headers)
    except PoisonEventError:
        return f"unparsable:{hashlib.sha256(raw).hexdigest()[:16]}", {}
    return event.event_id, event.payload.model_dump(mode="json")


def _decode(topic: str, raw: bytes, headers: Headers) -> tuple[str, dict[str, Any]]:
    if not topic.endswith(DLQ_SUFFIX):
        return _event_of(raw, headers)
    letter = json.loads(raw)
    return _event_of(base64.b64decode(letter["value_b64"]), decode_headers(letter.get("headers_b64")))


class BrokerView:
    """Read-only access to one run's topics and groups. Any call raises while the broker is
    down; the clients are rebuilt on the next call. Made while the broker is up (so that a
    mistake in the clients' configuration surfaces here, not as a broker that never answers)."""

    def __init__(self, bootstrap: str, prefix: str, timeout_s: float = 5.0) -> None:
        self.bootstrap = bootstrap
        self.prefix = prefix
        self.timeout_ms = int(timeout_s * 1000)
        self._consumer: Any = None
        self._admin: Any = None
        self._clients()

    def _clients(self) -> tuple[Any, Any]:
        if self._consumer is None:
            self._consumer = KafkaConsumer(
                bootstrap_servers=self.bootstrap,
                enable_auto_commit=False,
                request_timeout_ms=max(self.timeout_ms, 11000),
                bootstrap_timeout_ms=self.timeout_ms,
            )
        if self._admin is None:
            self._admin = KafkaAdminClient(
                bootstrap_servers=self.bootstrap,
                request_timeout_ms=self.timeout_ms,
                bootstrap_timeout_ms=self.timeout_ms,
            )
        return self._consumer, self._admin

    def _guarded(self, call: Any) -> Any:
        """``call`` with the clients, again while the broker answers with a retriable error
        (no group coordinator yet, a leader moving)."""
        deadline = time.monotonic() + self.timeout_ms / 1000
        while True:
            try:
                return call(*self._clients())
            except KafkaError as exc:
                if not exc.retriable or time.monotonic() > deadline:
                    self.close()
                    raise
                time.sleep(0.2)
            except Exception:
                self.close()
                raise

    def _partitions(self, consumer: Any, topics: Iterable[str]) -> list[Any]:
        found = []
        for topic in topics:
            numbers = consumer.partitions_for_topic(self.prefix + topic) or set()
            found += [TopicPartition(self.prefix + topic, number) for number in sorted(numbers)]
        return found

    def end_offsets(self, topics: Sequence[str]) -> dict[str, int]:
        """Records ever appended to each topic."""

        def call(consumer: Any, _admin: Any) -> dict[str, int]:
            ends = consumer.end_offsets(self._partitions(consumer, topics))
            totals = dict.fromkeys(topics, 0)
            for tp, end in ends.items():
                totals[tp.topic.removeprefix(self.prefix)] += end
            return totals

        result: dict[str, int] = self._guarded(call)
        return result

    def committed(self, group: str, topics: Sequence[str]) -> tuple[int, int]:
        """(records committed, records appended) over the group's topics."""

        def call(consumer: Any, admin: Any) -> tuple[int, int]:
            partitions = self._partitions(consumer, topics)
            ends = consumer.end_offsets(partitions)
            group_id = self.prefix + group
            offsets = admin.list_group_offsets({group_id: partitions}).get(group_id, {}) if partitions else {}
            done = sum(max(0, offsets[tp].offset) for tp in partitions if offsets.get(tp) is not None)
            return done, sum(ends.values())

        result: tuple[int, int] = self._guarded(call)
        return result

    def records(self, topics: Sequence[str]) -> list[Record]:
        """Every record on ``topics`` so far, in (topic, partition, offset) order."""

        def call(consumer: Any, _admin: Any) -> list[Record]:
            partitions = self._partitions(consumer, topics)
            ends = consumer.end_offsets(partitions)
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            found: list[Record] = []
            deadline = time.monotonic() + 60
            while any(consumer.position(tp) < ends[tp] for tp in partitions):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"could not read {topics} to their ends")
                for tp, batch in consumer.poll(timeout_ms=1000, max_records=1000).items():
                    topic = tp.topic.removeprefix(self.prefix)
                    for record in batch:
                        if record.offset >= ends[tp]:
                            continue
                        event_id, payload = _decode(topic, record.value, tuple(record.headers or ()))
                        found.append(
                            Record(topic, tp.partition, record.offset, record.timestamp / 1000, event_id, payload)
                        )
            consumer.assign([])
            return sorted(found, key=lambda r: (r.topic, r.partition, r.offset))

        result: list[Record] = self._guarded(call)
        return result

    def close(self) -> None:
        consumer, admin, self._consumer, self._admin = self._consumer, self._admin, None, None
        for client in (consumer, admin):
            if client is not None:
                with suppress(Exception):  # a client of a broker that is gone may fail to close; dropped anyway
                    client.close()
