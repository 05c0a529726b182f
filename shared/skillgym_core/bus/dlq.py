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
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from skillgym_core.bus.base import Delivery
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts.events import Envelope
from skillgym_core.contracts.topics import DLQ_SUFFIX
from skillgym_core.errors import PoisonEventError, SkillGymError
from skillgym_core.ids import sha256_hex

RUN_LOG_DIR = "dlq"  # below an embedded run's directory: one ``<topic>.dlq.jsonl`` per dead-letter topic
LOG_SUFFIX = ".jsonl"
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


def parse_dead_letter(delivery: Delivery, broker_time: dt.datetime | None = None) -> DeadLetter:
    """The letter in ``delivery`` (read from a ``.dlq`` topic); ``broker_time`` stands in for a
    letter that does not say when it was written."""
    try:
        loaded = json.loads(delivery.value)
    except ValueError:
        loaded = None
    record: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    value = _decode_value(record.get("value_b64"))
    event = _envelope(value)
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
    )


def _decode_value(encoded: object) -> bytes | None:
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _envelope(value: bytes | None) -> Envelope | None:
    if value is None:
        return None
    try:
        return Envelope.from_bytes(value)
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
    by_topic: dict[str, list[Delivery]] = defaultdict(list)
    for delivery in records:
        by_topic[delivery.topic].append(delivery)
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob(f"*{DLQ_SUFFIX}{LOG_SUFFIX}"):
        if stale.name.removesuffix(LOG_SUFFIX) not in by_topic:
            stale.unlink()
    # the in-memory bus keeps no record times: when the log was written stands in for a letter's own
    logged_at = dt.datetime.now(dt.UTC).isoformat()
    for topic, deliveries in by_topic.items():
        lines = [
            json.dumps({"partition": d.partition, "offset": d.offset, "key": d.key, "logged_at": logged_at,
                        "value_b64": base64.b64encode(d.value).decode()})
            for d in deliveries
        ]  # fmt: skip
        (directory / f"{topic}{LOG_SUFFIX}").write_text("".join(line + "\n" for line in lines))


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

    def _path(self, dlq_topic: str) -> Path:
        return self.directory / f"{dlq_topic}{LOG_SUFFIX}"

    def holds(self, dlq_topic: str) -> bool:
        return self._path(dlq_topic).is_file()

    def read(self, dlq_topic: str) -> list[DeadLetter]:
        if not self.holds(dlq_topic):
            return []
        letters = []
        for number, line in enumerate(self._path(dlq_topic).read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                value = base64.b64decode(row["value_b64"])
                delivery = Delivery(dlq_topic, int(row["partition"]), int(row["offset"]), row.get("key"), value)
            except (ValueError, KeyError, TypeError) as exc:
                raise DeadLetterError(
                    f"{self._path(dlq_topic)}:{number}: not a dead-letter log line",
                    reason="unreadable_dlq_log",
                    path=str(self._path(dlq_topic)),
                    line=number,
                ) from exc
            letters.append(parse_dead_letter(delivery, parse_time(row.get("logged_at"))))
        return letters

    def close(self) -> None:
        pass


class KafkaDeadLetters:
    """Reads dead-letter topics with a consumer in no group: it assigns itself every partition,
    reads from the first record to the end offsets taken when it started, and commits nothing."""

    def __init__(self, bootstrap: str, *, prefix: str = "", timeout_s: float = 10.0) -> None:
        from kafka import KafkaConsumer  # type: ignore[import-untyped,unused-ignore]
        from kafka.errors import KafkaError  # type: ignore[import-untyped,unused-ignore]

        self.bootstrap = bootstrap
        self.prefix = prefix
        self.timeout_s = timeout_s
        self._topics: set[str] | None = None
        timeout_ms = max(1000, int(timeout_s * 1000))
        try:
            self._consumer = KafkaConsumer(
                bootstrap_servers=bootstrap,
                group_id=None,
                enable_auto_commit=False,
                client_id="skillgym-dlq-reader",
                request_timeout_ms=timeout_ms,
                bootstrap_timeout_ms=timeout_ms,
            )
        except KafkaError as exc:
            raise DeadLetterError(
                f"no Kafka broker answered at {bootstrap} within {timeout_s:g} s ({type(exc).__name__})",
                reason="broker_unreachable",
                bootstrap=bootstrap,
            ) from exc

    def describe(self) -> str:
        return f"Kafka at {self.bootstrap}"

    def _failure(self, action: str, exc: BaseException, topic: str) -> DeadLetterError:
        return DeadLetterError(
            f"reading {topic} from Kafka at {self.bootstrap} failed while {action}: {type(exc).__name__}: {exc}",
            reason="dlq_read_failed",
            bootstrap=self.bootstrap,
            topic=topic,
        )

    def holds(self, dlq_topic: str) -> bool:
        from kafka.errors import KafkaError

        if self._topics is None:
            try:
                self._topics = set(self._consumer.topics())
            except KafkaError as exc:
                raise self._failure("listing topics", exc, dlq_topic) from exc
        return self.prefix + dlq_topic in self._topics

    def read(self, dlq_topic: str) -> list[DeadLetter]:
        from kafka.errors import KafkaError
        from kafka.structs import TopicPartition  # type: ignore[import-untyped,unused-ignore]

        if not self.holds(dlq_topic):
            return []
        name = self.prefix + dlq_topic
        timeout_ms = max(1000, int(self.timeout_s * 1000))
        try:
            partitions = [TopicPartition(name, p) for p in sorted(self._consumer.partitions_for_topic(name) or ())]
            self._consumer.assign(partitions)
            starts = self._consumer.beginning_offsets(partitions, timeout_ms=timeout_ms)
            ends = self._consumer.end_offsets(partitions, timeout_ms=timeout_ms)
            for tp in partitions:
                self._consumer.seek(tp, starts[tp])
            return self._read_until(dlq_topic, ends, {tp for tp in partitions if ends[tp] > starts[tp]})
        except KafkaError as exc:
            raise self._failure("reading", exc, dlq_topic) from exc
        finally:
            self._consumer.assign([])

    def _read_until(self, dlq_topic: str, ends: dict[Any, int], unread: set[Any]) -> list[DeadLetter]:
        letters: list[DeadLetter] = []
        deadline = time.monotonic() + self.timeout_s
        while unread:
            if time.monotonic() > deadline:
                raise DeadLetterError(
                    f"reading {dlq_topic} from Kafka at {self.bootstrap} did not reach its end within {self.timeout_s:g} s",
                    reason="dlq_read_timeout",
                    topic=dlq_topic,
                    read=len(letters),
                )
            for tp, records in self._consumer.poll(timeout_ms=500, max_records=500).items():
                for record in records:
                    if record.offset >= ends[tp]:
                        continue  # written after reading started
                    key = None if record.key is None else record.key.decode("utf-8", "replace")
                    delivery = Delivery(dlq_topic, record.partition, record.offset, key, record.value)
                    written = parse_time(record.timestamp) if record.timestamp and record.timestamp > 0 else None
                    letters.append(parse_dead_letter(delivery, written))
            unread = {tp for tp in unread if (self._consumer.position(tp, timeout_ms=1000) or 0) < ends[tp]}
        return letters

    def close(self) -> None:
        self._consumer.close(autocommit=False)
