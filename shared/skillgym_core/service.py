"""What a service is (a handler from one event to the payloads it emits) and the worker that
drives it over any bus: parse, dedupe, handle, record the outputs, publish, then commit.

Nothing polled is ever passed over: a record is committed only once it was handled (or answered
from its done-marker) and its outputs published, or once it was dead-lettered. When anything
else fails (the store, the broker, a dependency the handler waits on) the consumer rewinds
every partition of the batch with uncommitted records to its last commit, pauses with capped
exponential backoff and reads them again; such failures never cost an event an attempt.
Poison and non-retryable events go to ``<topic>.dlq`` at once, other handler exceptions after
``max_attempts``."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, TypeVar

from skillgym_core import keys, metrics
from skillgym_core.bus.base import Bus, Delivery, Subscription, TopicPartition
from skillgym_core.bus.letters import dead_letter
from skillgym_core.contracts.cloudevents import EventMode, read_event, to_record
from skillgym_core.contracts.events import Envelope, Payload
from skillgym_core.contracts.topics import dlq
from skillgym_core.contracts.topology import consumer_group
from skillgym_core.errors import PoisonEventError, SkillGymError, TransientError
from skillgym_core.failures import FailureKind, ProcessingInterrupted, backoff_delay, classify, dependency_of, describe
from skillgym_core.health import BROKER, STORE, DependencyHealth, ProgressTracker
from skillgym_core.lanes import committable, run_lanes
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store, put_json

log = logging.getLogger(__name__)

T = TypeVar("T")
RecordId = tuple[str, int, int]  # topic, partition, offset


class Service(Protocol):
    """A pipeline stage. ``handle`` must be idempotent: the same event yields the same outputs."""

    name: str
    consumes: tuple[str, ...]

    def handle(self, event: Envelope) -> Sequence[Payload]: ...


@dataclass
class WorkerStats:
    consumed: int = 0
    produced: int = 0
    duplicates: int = 0
    dead_lettered: int = 0
    interruptions: int = 0
    failures: list[dict[str, object]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, name: str, by: int = 1) -> None:
        """Add to a counter; records of one batch may be handled on several threads."""
        with self._lock:
            setattr(self, name, getattr(self, name) + by)


class Worker:
    def __init__(
        self,
        service: Service,
        bus: Bus,
        store: Store,
        *,
        max_attempts: int = 3,
        backoff_s: float = 0.2,
        backoff_max_s: float = 5.0,
        group: str | None = None,
        health: DependencyHealth | None = None,
        progress: ProgressTracker | None = None,
        pause: Callable[[float], object] = time.sleep,
        transient_patience_s: float | None = None,
        commit_interval_s: float = 1.0,
        concurrency: int = 1,
        event_mode: EventMode | None = None,
    ) -> None:
        """``pause`` waits between retries (a stop event's ``wait`` makes the waits interruptible).
        ``transient_patience_s`` bounds how long a handler's transient failure is waited out for
        one record before it is dead-lettered (None: for as long as it lasts, as a long-running
        service should; a one-shot run must end). Handled records are committed together at the
        end of their batch, or once ``commit_interval_s`` passed since the last commit. A service
        marked ``concurrent`` has the records of one batch handled on up to ``concurrency``
        threads, one lane per key (see :mod:`skillgym_core.lanes`). Outputs are published as
        CloudEvents in ``event_mode`` (None: the ``SKILLGYM_EVENT_MODE`` setting)."""
        self.service = service
        self.bus = bus
        self.store = store
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.group = group or consumer_group(service.name)
        self.health = health or DependencyHealth(service.name)
        self.progress = progress or ProgressTracker()
        self.pause = pause
        self.stats = WorkerStats()
        self.last_interruption: ProcessingInterrupted | None = None
        self._subscription: Subscription | None = None
        self._unsettled: set[TopicPartition] = set()  # partitions to rewind before polling again
        self._consecutive_interruptions = 0
        self._failed_attempts: dict[RecordId, tuple[int, BaseException]] = {}
        self.transient_patience_s = transient_patience_s
        self.commit_interval_s = commit_interval_s
        self.concurrency = concurrency if getattr(service, "concurrent", False) else 1
        self.event_mode: EventMode = event_mode or CommonSettings().event_mode
        self._last_commit = time.monotonic()
        self._transient_since: dict[RecordId, float] = {}
        for topic in service.consumes:
            # zero-valued series from the start, so rates and alerts see "nothing yet", not "no data"
            metrics.EVENTS_CONSUMED.labels(service.name, topic)
            metrics.EVENTS_DLQ.labels(service.name, topic)
            metrics.EVENTS_SKIPPED.labels(service.name, topic)

    @property
    def subscription(self) -> Subscription:
        if self._subscription is None:
            self._subscription = self.bus.subscribe(self.service.consumes, self.group)
        return self._subscription

    @property
    def current_subscription(self) -> Subscription | None:
        """The subscription if there is one (never subscribes)."""
        return self._subscription

    def run_once(self, timeout_s: float = 0.0, max_records: int = 100) -> int:
        """Process one polled batch; return how many records it held. A dependency failure
        rewinds the batch's unsettled partitions and pauses (the next call reads them again);
        any other exception escapes, after the same rewind."""
        try:
            self._rewind_unsettled()
            batch = self._step(BROKER, "poll", lambda: self.subscription.poll(timeout_s, max_records))
        except ProcessingInterrupted as interrupted:
            self._back_off(interrupted)
            return 0
        self.progress.polled(Counter(d.topic_partition for d in batch))
        if self.concurrency > 1 and len(batch) > 1:
            return self._run_lanes(batch)
        handled: list[Delivery] = []  # processed, their commit still to come
        committed = 0
        try:
            for delivery in batch:
                self.process(delivery)
                handled.append(delivery)
                if time.monotonic() - self._last_commit >= self.commit_interval_s:
                    committed += self._commit(handled)
            committed += self._commit(handled)
        except Exception as exc:
            if not (isinstance(exc, ProcessingInterrupted) and exc.action == "commit"):
                with suppress(ProcessingInterrupted):  # what was handled keeps its place
                    committed += self._commit(handled)
            self._unsettled.update(d.topic_partition for d in batch[committed:])
            with suppress(ProcessingInterrupted):  # a failed rewind is retried before the next poll
                self._rewind_unsettled()
            if not isinstance(exc, ProcessingInterrupted):
                raise
            self._back_off(exc)
        return len(batch)

    def _run_lanes(self, batch: list[Delivery]) -> int:
        done, failures = run_lanes(batch, self.process, self.concurrency)
        ready, blocked = committable(batch, done)
        try:
            self._commit(ready)
        except ProcessingInterrupted as commit_failed:
            failures.insert(0, commit_failed)
            blocked.update(d.topic_partition for d in ready)
        if not failures:
            return len(batch)
        self._unsettled.update(blocked)
        with suppress(ProcessingInterrupted):  # a failed rewind is retried before the next poll
            self._rewind_unsettled()
        unexpected = [exc for exc in failures if not isinstance(exc, ProcessingInterrupted)]
        if unexpected:
            raise unexpected[0]
        first = failures[0]
        assert isinstance(first, ProcessingInterrupted)
        self._back_off(first)
        return len(batch)

    def _commit(self, handled: list[Delivery]) -> int:
        """Commit ``handled`` in one request (then it is empty); how many were committed."""
        if not handled:
            return 0
        self._step(BROKER, "commit", partial(self.subscription.commit_batch, list(handled)))
        self._last_commit = time.monotonic()
        for delivery in handled:
            self._settled(delivery)
        count = len(handled)
        handled.clear()
        return count

    def run_forever(self, should_stop: object, poll_timeout_s: float = 1.0) -> None:
        while not getattr(should_stop, "is_set", lambda: False)():
            self.run_once(timeout_s=poll_timeout_s)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
            self._unsettled.clear()

    def _done_key(self, event_id: str) -> str:
        return keys.event_done(self.service.name, event_id)

    def process(self, delivery: Delivery) -> None:
        """Settle one record short of its commit: dead-letter it, or make sure its outputs are
        recorded in the done-marker and published. Raises :class:`ProcessingInterrupted` when a
        dependency failed; the record must then be delivered again."""
        name, topic = self.service.name, delivery.topic
        try:
            event = read_event(delivery)
        except PoisonEventError as exc:
            metrics.EVENTS_FAILED.labels(name, topic, exc.reason).inc()
            self._dead_letter(delivery, exc, attempts=0)
            return
        done_key = self._done_key(event.event_id)
        marker = self._step(STORE, "read done-marker", lambda: self._read_marker(done_key), delivery)
        outputs = self._recorded_outputs(done_key, marker) if marker is not None else None
        if outputs is not None:
            metrics.EVENTS_SKIPPED.labels(name, topic).inc()
            self.stats.count("duplicates")
        else:
            payloads = self._handle(delivery, event)
            if payloads is None:
                metrics.EVENTS_CONSUMED.labels(name, topic).inc()
                self.stats.count("consumed")
                return
            outputs = [
                Envelope.wrap(payload, producer=name, correlation_id=event.correlation_id) for payload in payloads
            ]
            # The marker goes first: once it exists, a redelivery publishes exactly these outputs.
            recorded = [out.model_dump(mode="json") for out in outputs]
            self._step(STORE, "write done-marker", lambda: put_json(self.store, done_key, recorded), delivery)
        self._step(BROKER, "publish", lambda: self._publish(outputs), delivery)
        metrics.EVENTS_CONSUMED.labels(name, topic).inc()
        self.stats.count("consumed")

    def _read_marker(self, done_key: str) -> bytes | None:
        return self.store.get_bytes(done_key) if self.store.exists(done_key) else None

    def _recorded_outputs(self, done_key: str, marker: bytes) -> list[Envelope] | None:
        """The outputs a done-marker recorded; None for one that no longer parses (written by
        an older contract, say): the idempotent handler runs again and rewrites it."""
        try:
            return [Envelope.model_validate(item) for item in json.loads(marker)]
        except (ValueError, TypeError) as exc:
            log.warning("unreadable done-marker; handling the event again", extra={"key": done_key, "error": str(exc)})
            return None

    def _handle(self, delivery: Delivery, event: Envelope) -> list[Payload] | None:
        """The handler's payloads, or None once the event was dead-lettered."""
        name, topic = self.service.name, delivery.topic
        record: RecordId = (topic, delivery.partition, delivery.offset)
        attempts, last = self._failed_attempts.get(record, (0, None))
        while True:
            if last is not None and (classify(last) is FailureKind.PERMANENT or attempts >= self.max_attempts):
                self._dead_letter(delivery, last, attempts=attempts)
                return None
            if attempts:
                self.pause(backoff_delay(self.backoff_s, self.backoff_max_s, attempts))
            started = time.perf_counter()
            try:
                return list(self.service.handle(event))
            except Exception as exc:
                reason = exc.reason if isinstance(exc, SkillGymError) else type(exc).__name__
                metrics.EVENTS_FAILED.labels(name, topic, reason).inc()
                log.warning("handler failed", extra={"service": name, "event_id": event.event_id, "error": str(exc)})
                if isinstance(exc, TransientError) and classify(exc) is FailureKind.TRANSIENT:
                    if self._still_patient(record):
                        raise ProcessingInterrupted.during("handle", dependency_of(exc), exc, **_where(delivery)) from exc
                    attempts = self.max_attempts - 1  # out of patience: the last attempt was this one
                attempts, last = attempts + 1, exc
                self._failed_attempts[record] = (attempts, exc)
            finally:
                metrics.HANDLER_SECONDS.labels(name, topic).observe(time.perf_counter() - started)

    def _publish(self, outputs: Sequence[Envelope]) -> None:
        self.bus.publish_many([to_record(out, self.event_mode) for out in outputs])
        for out in outputs:
            metrics.EVENTS_PRODUCED.labels(self.service.name, out.type).inc()
            self.stats.count("produced")

    def _dead_letter(self, delivery: Delivery, exc: BaseException, *, attempts: int) -> None:
        record = dead_letter(self.service.name, delivery, attempts, describe(exc))
        value = json.dumps(record, default=str).encode()
        self._step(BROKER, "dead-letter", lambda: self.bus.publish(dlq(delivery.topic), delivery.key, value), delivery)
        metrics.EVENTS_DLQ.labels(self.service.name, delivery.topic).inc()
        self.stats.count("dead_lettered")
        self.stats.failures.append(record)

    def _step(self, dependency: str, action: str, operation: Callable[[], T], delivery: Delivery | None = None) -> T:
        """Run one call on a dependency; its failure (of any kind) interrupts the record."""
        try:
            return operation()
        except ProcessingInterrupted:
            raise
        except Exception as exc:
            where = _where(delivery) if delivery else {}
            raise ProcessingInterrupted.during(action, dependency, exc, **where) from exc

    def _rewind_unsettled(self) -> None:
        if self._unsettled and self._subscription is not None:
            partitions = sorted(self._unsettled)
            self._step(BROKER, "rewind", lambda: self.subscription.rewind(partitions))
        self._unsettled.clear()

    def _still_patient(self, record: RecordId) -> bool:
        since = self._transient_since.setdefault(record, time.monotonic())
        return self.transient_patience_s is None or time.monotonic() - since < self.transient_patience_s

    def _settled(self, delivery: Delivery) -> None:
        self._failed_attempts.pop((delivery.topic, delivery.partition, delivery.offset), None)
        self._transient_since.pop((delivery.topic, delivery.partition, delivery.offset), None)
        self._consecutive_interruptions = 0
        self.health.all_answered()
        self.progress.settled(delivery.topic_partition)

    def _back_off(self, interrupted: ProcessingInterrupted) -> None:
        self._consecutive_interruptions += 1
        self.stats.interruptions += 1
        self.last_interruption = interrupted
        self.health.failed(interrupted.dependency, interrupted)
        delay = backoff_delay(self.backoff_s, self.backoff_max_s, self._consecutive_interruptions)
        log.warning(
            "record interrupted; it will be read again",
            extra={"service": self.service.name, "retry_in_s": delay, **interrupted.details},
        )
        self.pause(delay)


def _where(delivery: Delivery) -> dict[str, object]:
    return {"topic": delivery.topic, "partition": delivery.partition, "offset": delivery.offset}
