"""A small consumer of SkillGym events for services outside SkillGym.

Each record is decoded (either CloudEvents content mode, or the older envelope JSON), handed to
your handler as a typed :class:`Envelope`, and committed once handled. A record that holds no
event, or whose handler failed ``max_attempts`` times, is dead-lettered to ``<topic>.dlq`` with
the original record's headers (``skillgym dlq show|replay`` read it) and committed, so one bad
record never stops its partition::

    consumer = EventConsumer.connect("kafka:9092", [topics.ENV_VALIDATED], group="my-app")
    try:
        consumer.run(handle)
    finally:
        consumer.close()

Delivery is at least once: after a crash or a rebalance a handler may see an event again. Event
ids are content-derived, so remember what you did by ``event.event_id`` to skip repeats."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from skillgym_core.bus.base import Bus, Delivery, Subscription
from skillgym_core.bus.letters import dead_letter
from skillgym_core.contracts.cloudevents import read_event
from skillgym_core.contracts.events import Envelope
from skillgym_core.contracts.topics import dlq
from skillgym_core.errors import PoisonEventError
from skillgym_core.failures import describe

log = logging.getLogger(__name__)

Handler = Callable[[Envelope], object]


@dataclass
class ConsumerStats:
    handled: int = 0
    dead_lettered: int = 0


class EventConsumer:
    def __init__(
        self,
        bus: Bus,
        topics: Sequence[str],
        group: str,
        *,
        name: str | None = None,
        max_attempts: int = 3,
        backoff_s: float = 0.5,
        pause: Callable[[float], object] = time.sleep,
    ) -> None:
        """``name`` is who the dead letters say gave up (default: ``group``)."""
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.bus = bus
        self.topics = list(topics)
        self.group = group
        self.name = name or group
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.pause = pause
        self.stats = ConsumerStats()
        self._subscription: Subscription | None = None

    @classmethod
    def connect(cls, bootstrap: str, topics: Sequence[str], group: str, **options: Any) -> EventConsumer:
        """A consumer of ``topics`` on the Kafka cluster at ``bootstrap`` (kafka-python)."""
        from skillgym_core.bus.kafka import KafkaBus

        return cls(KafkaBus(bootstrap), topics, group, **options)

    @property
    def subscription(self) -> Subscription:
        if self._subscription is None:
            self._subscription = self.bus.subscribe(self.topics, self.group)
        return self._subscription

    def poll_once(self, handle: Handler, timeout_s: float = 1.0, max_records: int = 100) -> int:
        """Handle one polled batch; how many records it held. When anything fails (the broker,
        say) the records not yet committed are read again by the next poll, then it raises."""
        batch = self.subscription.poll(timeout_s=timeout_s, max_records=max_records)
        for index, delivery in enumerate(batch):
            try:
                self._settle(delivery, handle)
                self.subscription.commit(delivery)
            except BaseException:
                self.subscription.rewind(sorted({d.topic_partition for d in batch[index:]}))
                raise
        return len(batch)

    def run(self, handle: Handler, *, max_events: int | None = None, idle_timeout_s: float | None = None,
            poll_timeout_s: float = 1.0) -> ConsumerStats:  # fmt: skip
        """Handle events until ``max_events`` were settled (handled or dead-lettered) or none came
        for ``idle_timeout_s``; either None: for as long as the process runs."""
        quiet_since = time.monotonic()
        while max_events is None or self.stats.handled + self.stats.dead_lettered < max_events:
            wanted = 100 if max_events is None else max(1, max_events - self.stats.handled - self.stats.dead_lettered)
            if self.poll_once(handle, timeout_s=poll_timeout_s, max_records=min(100, wanted)):
                quiet_since = time.monotonic()
            elif idle_timeout_s is not None and time.monotonic() - quiet_since >= idle_timeout_s:
                break
        return self.stats

    def _settle(self, delivery: Delivery, handle: Handler) -> None:
        try:
            event = read_event(delivery)
        except PoisonEventError as exc:
            self._dead_letter(delivery, exc, attempts=0)
            return
        for attempt in range(1, self.max_attempts + 1):
            try:
                handle(event)
            except Exception as exc:
                log.warning("handler failed", extra={"event_id": event.event_id, "attempt": attempt, "error": str(exc)})
                if attempt == self.max_attempts:
                    self._dead_letter(delivery, exc, attempts=attempt)
                    return
                self.pause(self.backoff_s * 2 ** (attempt - 1))
            else:
                self.stats.handled += 1
                return

    def _dead_letter(self, delivery: Delivery, exc: BaseException, *, attempts: int) -> None:
        letter = dead_letter(self.name, delivery, attempts, describe(exc))
        self.bus.publish(dlq(delivery.topic), delivery.key, json.dumps(letter, default=str).encode())
        self.stats.dead_lettered += 1

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        self.bus.close()
