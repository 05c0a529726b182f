"""What a service is (a handler from one event to the payloads it emits) and the worker that
drives it over any bus: parse, dedupe, handle with retries, publish, then commit; poison and
exhausted events go to ``<topic>.dlq`` with the error, so nothing is silently dropped."""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from skillgym_core import metrics
from skillgym_core.bus.base import Bus, Delivery, Subscription
from skillgym_core.contracts.events import Envelope, Payload
from skillgym_core.contracts.topics import dlq
from skillgym_core.errors import ContractError, PoisonEventError, SkillGymError
from skillgym_core.store.base import Store, get_json, put_json

log = logging.getLogger(__name__)

NON_RETRYABLE = (PoisonEventError, ContractError)


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
    failures: list[dict[str, object]] = field(default_factory=list)


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
    ) -> None:
        self.service = service
        self.bus = bus
        self.store = store
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.group = group or f"skillgym-{service.name}"
        self.stats = WorkerStats()
        self._subscription: Subscription | None = None
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

    def run_once(self, timeout_s: float = 0.0, max_records: int = 100) -> int:
        """Process one polled batch; return how many records it held."""
        batch = self.subscription.poll(timeout_s=timeout_s, max_records=max_records)
        for delivery in batch:
            self.process(delivery)
            self.subscription.commit(delivery)
        return len(batch)

    def run_forever(self, should_stop: object, poll_timeout_s: float = 1.0) -> None:
        while not getattr(should_stop, "is_set", lambda: False)():
            self.run_once(timeout_s=poll_timeout_s)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def _done_key(self, event_id: str) -> str:
        return f"state/{self.service.name}/done/{event_id}.json"

    def process(self, delivery: Delivery) -> None:
        name, topic = self.service.name, delivery.topic
        try:
            event = Envelope.from_bytes(delivery.value)
        except PoisonEventError as exc:
            metrics.EVENTS_FAILED.labels(name, topic, exc.reason).inc()
            self._dead_letter(delivery, exc, attempts=0)
            return
        metrics.EVENTS_CONSUMED.labels(name, topic).inc()
        self.stats.consumed += 1
        done_key = self._done_key(event.event_id)
        if self.store.exists(done_key):
            outputs = [Envelope.model_validate(item) for item in get_json(self.store, done_key)]
            metrics.EVENTS_SKIPPED.labels(name, topic).inc()
            self.stats.duplicates += 1
            self._publish(outputs)
            return
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                payloads = list(self.service.handle(event))
                break
            except Exception as exc:
                reason = exc.reason if isinstance(exc, SkillGymError) else type(exc).__name__
                metrics.EVENTS_FAILED.labels(name, topic, reason).inc()
                log.warning("handler failed", extra={"service": name, "event_id": event.event_id, "error": str(exc)})
                if isinstance(exc, NON_RETRYABLE) or attempt >= self.max_attempts:
                    self._dead_letter(delivery, exc, attempts=attempt)
                    return
                time.sleep(min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1)))
            finally:
                metrics.HANDLER_SECONDS.labels(name, topic).observe(time.perf_counter() - started)
        outputs = [
            Envelope.wrap(payload, producer=name, correlation_id=event.correlation_id) for payload in payloads
        ]
        self._publish(outputs)
        put_json(self.store, done_key, [out.model_dump(mode="json") for out in outputs])

    def _publish(self, outputs: Sequence[Envelope]) -> None:
        for out in outputs:
            self.bus.publish(out.type, out.key, out.to_bytes())
            metrics.EVENTS_PRODUCED.labels(self.service.name, out.type).inc()
            self.stats.produced += 1

    def _dead_letter(self, delivery: Delivery, exc: BaseException, *, attempts: int) -> None:
        error = exc.to_dict() if isinstance(exc, SkillGymError) else {"error": type(exc).__name__, "message": str(exc)}
        record = {
            "service": self.service.name,
            "topic": delivery.topic,
            "partition": delivery.partition,
            "offset": delivery.offset,
            "key": delivery.key,
            "attempts": attempts,
            "error": error,
            "value_b64": base64.b64encode(delivery.value).decode(),
        }
        self.bus.publish(dlq(delivery.topic), delivery.key, json.dumps(record, default=str).encode())
        metrics.EVENTS_DLQ.labels(self.service.name, delivery.topic).inc()
        self.stats.dead_lettered += 1
        self.stats.failures.append(record)
