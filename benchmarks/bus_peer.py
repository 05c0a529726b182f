"""The Kafka bus side by side with raw kafka-python on the same broker, record size and producer
guarantees (acks=all, idempotence): batched publish (send all, flush once, check every future),
consume with one commit per polled batch, and the hop latency of a no-op stage run by the
project's Worker (published on one topic, handled, its output read on the next)."""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, KafkaProducer  # type: ignore[import-untyped,unused-ignore]
from kafka.structs import OffsetAndMetadata  # type: ignore[import-untyped,unused-ignore]
from skillgym_core.bus.batching import BatchingPublisher
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.bus.prefixed import PrefixedBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import read_event, to_record
from skillgym_core.contracts.events import EnvBuilt, Envelope, Payload, SkillIngested
from skillgym_core.service import Worker
from skillgym_core.store.local import LocalStore

PUBLISH_BATCH = 1000
POLL_RECORDS = 500


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _fresh_topic(bus: KafkaBus, name: str) -> str:
    topic = f"{name}-{uuid.uuid4().hex[:8]}"
    bus.ensure_topics([topic])
    return topic


def raw_publish(bootstrap: str, topic: str, records: int, payload: bytes, linger_ms: int, batch_bytes: int) -> float:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                             linger_ms=linger_ms, batch_size=batch_bytes)
    try:
        def send_all() -> None:
            for start in range(0, records, PUBLISH_BATCH):
                futures = [producer.send(topic, key=f"k{i % 16}".encode(), value=payload)
                           for i in range(start, min(records, start + PUBLISH_BATCH))]
                producer.flush()
                for future in futures:
                    future.get(timeout=0)
        return _timed(send_all)
    finally:
        producer.close()


def bus_publish(bus: KafkaBus, topic: str, records: int, payload: bytes) -> float:
    def send_all() -> None:
        with BatchingPublisher(bus, batch_size=PUBLISH_BATCH) as publisher:
            for i in range(records):
                publisher.add(topic, f"k{i % 16}", payload)
    return _timed(send_all)


def bus_publish_one_by_one(bus: KafkaBus, topic: str, records: int, payload: bytes) -> float:
    return _timed(lambda: [bus.publish(topic, f"k{i % 16}", payload) for i in range(records)])


def _drain(read_and_commit: Callable[[], int], records: int, who: str) -> float:
    """Seconds until ``records`` were read (each call reads one batch and commits it)."""
    consumed = 0

    def consume_all() -> None:
        nonlocal consumed
        deadline = time.monotonic() + 300
        while consumed < records and time.monotonic() < deadline:
            consumed += read_and_commit()

    seconds = _timed(consume_all)
    if consumed < records:
        raise RuntimeError(f"{who} read {consumed} of {records}")
    return seconds


def raw_consume(bootstrap: str, topic: str, records: int) -> float:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"raw-{uuid.uuid4().hex[:8]}",
                             enable_auto_commit=False, auto_offset_reset="earliest")

    def batch() -> int:
        batches = consumer.poll(timeout_ms=500, max_records=POLL_RECORDS)
        if batches:
            consumer.commit({tp: OffsetAndMetadata(rows[-1].offset + 1, "", -1) for tp, rows in batches.items()})
        return sum(len(rows) for rows in batches.values())

    try:
        return _drain(batch, records, "raw consumer")
    finally:
        consumer.close(autocommit=False)


def bus_consume(bus: KafkaBus, topic: str, records: int) -> float:
    subscription = bus.subscribe([topic], f"bus-{uuid.uuid4().hex[:8]}")

    def batch() -> int:
        deliveries = subscription.poll(timeout_s=0.5, max_records=POLL_RECORDS)
        subscription.commit_batch(deliveries)
        return len(deliveries)

    try:
        return _drain(batch, records, "bus consumer")
    finally:
        subscription.close()


class NoopStage:
    """Announces a task for each skill and does nothing else: what remains is the bus, the
    worker's done-marker and its commit."""

    name = "noop"
    consumes = (topics.SKILL_INGESTED,)

    def handle(self, event: Envelope) -> Sequence[Payload]:
        skill = event.payload_as(SkillIngested)
        return [EnvBuilt(task_id=f"task-{skill.skill_id}", skill_id=skill.skill_id, package_key="p", template="t")]


def hop_latency(bootstrap: str, events: int, interval_s: float) -> dict[str, float]:
    """Publish ``events`` skill-ingested events ``interval_s`` apart; a Worker runs the no-op
    stage; the time from each publish to its env-built output being read is one hop."""
    prefix = f"hop{uuid.uuid4().hex[:6]}."
    bus = PrefixedBus(KafkaBus(bootstrap, partitions=3), prefix)
    bus.ensure_topics([topics.SKILL_INGESTED, topics.ENV_BUILT])
    stop = threading.Event()
    received: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="hop-") as tmp:
        worker = Worker(NoopStage(), bus, LocalStore(Path(tmp)), group="hop-worker")
        reader = bus.subscribe([topics.ENV_BUILT], "hop-reader")
        reader.poll(timeout_s=2.0)  # join the groups before the clock starts
        worker.run_once(timeout_s=2.0)

        def run_worker() -> None:
            while not stop.is_set():
                worker.run_once(timeout_s=0.05)

        def read_outputs() -> None:
            while not stop.is_set() or len(received) < events:
                for delivery in reader.poll(timeout_s=0.05, max_records=POLL_RECORDS):
                    received.setdefault(read_event(delivery).payload_as(EnvBuilt).skill_id, time.perf_counter())
                if stop.is_set() and time.monotonic() > deadline:
                    return

        deadline = float("inf")
        threads = [threading.Thread(target=run_worker, daemon=True), threading.Thread(target=read_outputs, daemon=True)]
        for thread in threads:
            thread.start()
        sent: dict[str, float] = {}
        for i in range(events):
            skill_id = f"skill-{uuid.uuid4().hex[:10]}"
            event = Envelope.wrap(SkillIngested(skill_id=skill_id, name=f"s{i}", record_key="r", files_key="f"),
                                  producer="bench", correlation_id="hop")
            sent[skill_id] = time.perf_counter()
            bus.publish_many([to_record(event)])
            time.sleep(interval_s)
        wait_until = time.monotonic() + 60
        while len(received) < events and time.monotonic() < wait_until:
            time.sleep(0.05)
        deadline = time.monotonic() + 1
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        worker.close()
        reader.close()
    bus.inner.close()  # type: ignore[attr-defined]
    hops = sorted(received[skill] - sent[skill] for skill in sent if skill in received)
    if len(hops) < events:
        raise RuntimeError(f"only {len(hops)} of {events} hops completed")
    return {"events": events, "hop_p50_ms": round(statistics.median(hops) * 1000, 2),
            "hop_p99_ms": round(statistics.quantiles(hops, n=100)[98] * 1000, 2)}


def compare(bootstrap: str, records: int, size: int, *, linger_ms: int = 5, batch_bytes: int = 256 * 1024,
            hop_events: int = 200, rounds: int = 5) -> dict[str, Any]:
    """Raw kafka-python and the bus, ``rounds`` times each, taking turns at going first. Both
    consumers read the same topic (each in its own group), so they read the same record batches;
    the ratios compare the medians of the rounds (the machine is shared, and one undisturbed
    round would otherwise decide), the best rounds are reported beside them."""
    payload = b"x" * size
    bus = KafkaBus(bootstrap, partitions=3, linger_ms=linger_ms, batch_bytes=batch_bytes)
    rows: dict[str, list[float]] = {"raw_publish": [], "bus_publish": [], "raw_consume": [], "bus_consume": []}
    try:
        for turn in range(rounds):
            raw_topic, bus_topic = _fresh_topic(bus, "raw"), _fresh_topic(bus, "bus")
            publishers = [("raw_publish", partial(raw_publish, bootstrap, raw_topic, records, payload, linger_ms, batch_bytes)),
                          ("bus_publish", partial(bus_publish, bus, bus_topic, records, payload))]
            consumers = [("raw_consume", partial(raw_consume, bootstrap, raw_topic, records)),
                         ("bus_consume", partial(bus_consume, bus, raw_topic, records))]
            for name, run in (*publishers[:: 1 - 2 * (turn % 2)], *consumers[:: 1 - 2 * (turn % 2)]):
                rows[name].append(records / run())
        one_by_one = min(records, 1000)
        sync_rate = one_by_one / bus_publish_one_by_one(bus, _fresh_topic(bus, "sync"), one_by_one, payload)
    finally:
        bus.close()
    median = {name: statistics.median(values) for name, values in rows.items()}
    best = {name: max(values) for name, values in rows.items()}
    return {
        "records": records,
        "record_bytes": size,
        "producer": {"acks": "all", "idempotence": True, "linger_ms": linger_ms, "batch_bytes": batch_bytes,
                     "publish_batch": PUBLISH_BATCH, "poll_records": POLL_RECORDS},
        "rounds": {name: [round(v, 1) for v in values] for name, values in rows.items()},
        "raw_publish_per_s": round(median["raw_publish"], 1),
        "bus_publish_per_s": round(median["bus_publish"], 1),
        "publish_ratio": round(median["bus_publish"] / median["raw_publish"], 3),
        "raw_consume_commit_per_s": round(median["raw_consume"], 1),
        "bus_consume_commit_per_s": round(median["bus_consume"], 1),
        "consume_ratio": round(median["bus_consume"] / median["raw_consume"], 3),
        "best_rounds": {name: round(value, 1) for name, value in best.items()},
        "bus_publish_one_by_one_per_s": round(sync_rate, 1),
        "noop_stage": hop_latency(bootstrap, hop_events, interval_s=0.02),
    }
