"""Dead letters as the worker writes them to ``<topic>.dlq``, read without disturbing anyone:
from Kafka by a consumer outside any group (partitions assigned by hand, nothing committed),
from an in-memory bus, or from the log an embedded run leaves in its run directory.

A letter is read tolerantly: fields it lacks are None, fields it has beyond the known ones are
kept in ``record``."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from skillgym_core.bus.base import Delivery, Headers
from skillgym_core.bus.letters import decode_headers
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.bus.record_log import RecordLogError, log_path, read_record_log, write_record_log
from skillgym_core.bus.snapshot import KafkaSnapshot, TopicReadError
from skillgym_core.contracts.cloudevents import from_record
from skillgym_core.contracts.events import Envelope
from skillgym_core.contracts.topics import DLQ_SUFFIX
from skillgym_core.errors import PoisonEventError, SkillGymError
from skillgym_core.ids import sha256_hex

RUN_LOG_DIR = "dlq"  # below an embedded run's directory: one ``<topic>.dlq.jsonl`` per dead-letter topic
WHEN_FIELDS = ("dead_lettered_at", "timestamp", "time")


class DeadLetterError(SkillGymError):
    """Dead letters cannot be read, or the letter asked for is not there."""

    reason = "dlq"


@dataclass(frozen=True)
class DeadLetter:
    id: str  # the original event's event_id; ``raw-<hash>`` of its bytes when they are no event
    topic: str  # where the original event was published
    dlq_topic: str
    partition: int  # where this letter lies in its dead-letter topic
    offset: int
    service: str | None
    reason: str
    attempts: int | None
    when: dt.datetime | None
    key: str | None
    value: bytes | None  # the original event's bytes; None when the letter does not hold them
    event: Envelope | None
    error: dict[str, Any]
    record: dict[str, Any]  # the letter as written
    headers: Headers = ()  # the original event's record headers (its CloudEvents attributes in binary mode)


def parse_dead_letter(delivery: Delivery, broker_time: dt.datetime | None = None) -> DeadLetter:
    """The letter in ``delivery`` (read from a ``.dlq`` topic); ``broker_time`` stands in for a
    letter that does not say when it was written."""
    try:
        loaded = json.loads(delivery.value)
    except ValueError:
        loaded = None
    record: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    value = _decode_value(record.get("value_b64"))
    headers = decode_headers(record.get("headers_b64"))
    event = _event(value, headers)
    raw_error = record.get("error")
    error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {"message": str(raw_error or "")}
    topic = record.get("topic")
    attempts = record.get("attempts")
    key = record.get("key", delivery.key)
    return DeadLetter(
        id=_letter_id(event, record, value if value is not None else delivery.value),
        topic=topic if isinstance(topic, str) and topic else delivery.topic.removesuffix(DLQ_SUFFIX),
        dlq_topic=delivery.topic,
        partition=delivery.partition,
        offset=delivery.offset,
        service=str(record["service"]) if record.get("service") else None,
        reason=str(error.get("reason") or error.get("error") or ("unreadable_letter" if not record else "unknown")),
        attempts=attempts if isinstance(attempts, int) and not isinstance(attempts, bool) else None,
        when=next((t for t in map(parse_time, (record.get(f) for f in WHEN_FIELDS)) if t), broker_time),
        key=key if isinstance(key, str) else None,
        value=value,
        event=event,
        error=error,
        record=record,
        headers=headers,
    )


def _decode_value(encoded: object) -> bytes | None:
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _event(value: bytes | None, headers: Headers) -> Envelope | None:
    if value is None:
        return None
    try:
        return from_record(value, headers)
    except PoisonEventError:
        return None


def _letter_id(event: Envelope | None, record: dict[str, Any], value: bytes) -> str:
    if event is not None:
        return event.event_id
    if isinstance(record.get("event_id"), str) and record["event_id"]:
        return str(record["event_id"])
    return f"raw-{sha256_hex(value)[:16]}"


def parse_time(value: object) -> dt.datetime | None:
    """An aware datetime from epoch seconds or milliseconds or an ISO string (naive: UTC)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return dt.datetime.fromtimestamp(value / 1000 if value > 1e11 else value, dt.UTC)
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


class DeadLetterSource(Protocol):
    def describe(self) -> str: ...

    def holds(self, dlq_topic: str) -> bool:
        """Whether the dead-letter topic exists here (it may be empty)."""
        ...

    def read(self, dlq_topic: str) -> list[DeadLetter]:
        """Every letter in the topic, up to its end when reading started."""
        ...

    def close(self) -> None: ...


class MemoryDeadLetters:
    def __init__(self, bus: MemoryBus) -> None:
        self.bus = bus

    def describe(self) -> str:
        return "the in-memory bus"

    def holds(self, dlq_topic: str) -> bool:
        return bool(self.bus.records(dlq_topic))

    def read(self, dlq_topic: str) -> list[DeadLetter]:
        return [parse_dead_letter(delivery) for delivery in self.bus.records(dlq_topic)]

    def close(self) -> None:
        pass


def write_dead_letter_log(directory: Path, records: Iterable[Delivery]) -> None:
    """Keep an embedded run's dead letters (its bus ends with it): one file per dead-letter
    topic, replacing what an earlier run in the same directory left."""
    write_record_log(directory, records, replaces=f"*{DLQ_SUFFIX}")


class LoggedDeadLetters:
    """The dead letters an embedded run kept in ``<run>/dlq/``."""

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise DeadLetterError(
                f"{directory} does not exist: not an embedded run directory, or one made before dead letters were kept",
                reason="no_dlq_log",
                path=str(directory),
            )
        self.directory = directory

    def describe(self) -> str:
        return str(self.directory)

    def holds(self, dlq_topic: str) -> bool:
        return log_path(self.directory, dlq_topic).is_file()

    def read(self, dlq_topic: str) -> list[DeadLetter]:
        try:
            logged = read_record_log(self.directory, dlq_topic)
        except RecordLogError as exc:
            raise DeadLetterError(str(exc), reason="unreadable_dlq_log", **exc.details) from exc
        return [parse_dead_letter(delivery, parse_time(logged_at)) for delivery, logged_at in logged]

    def close(self) -> None:
        pass


class KafkaDeadLetters:
    """Reads dead-letter topics with a consumer in no group (:class:`KafkaSnapshot`): from the
    first record to the end offsets taken when reading started, committing nothing."""

    ERROR_REASONS = {"topic_read_failed": "dlq_read_failed", "topic_read_timeout": "dlq_read_timeout"}

    def __init__(self, bootstrap: str, *, prefix: str = "", timeout_s: float = 10.0) -> None:
        self.bootstrap = bootstrap
        self._topics: dict[str, bool] = {}
        with self._as_dead_letter_error():
            self._snapshot = KafkaSnapshot(bootstrap, prefix=prefix, timeout_s=timeout_s)

    @contextmanager
    def _as_dead_letter_error(self) -> Iterator[None]:
        try:
            yield
        except TopicReadError as exc:
            raise DeadLetterError(str(exc), reason=self.ERROR_REASONS.get(exc.reason, exc.reason), **exc.details) from exc

    def describe(self) -> str:
        return f"Kafka at {self.bootstrap}"

    def holds(self, dlq_topic: str) -> bool:
        if dlq_topic not in self._topics:
            with self._as_dead_letter_error():
                self._topics[dlq_topic] = self._snapshot.exists(dlq_topic)
        return self._topics[dlq_topic]

    def read(self, dlq_topic: str) -> list[DeadLetter]:
        if not self.holds(dlq_topic):
            return []
        with self._as_dead_letter_error():
            records = self._snapshot.read_with_times(dlq_topic)
        return [parse_dead_letter(delivery, written) for delivery, written in records]

    def close(self) -> None:
        self._snapshot.close()
