"""Helpers for distributed mode: publish ingested skills to the configured bus and store, and
count what the pipeline produced by reading every topic."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from prometheus_client import REGISTRY, push_to_gateway
from skillgym_core.bus.batching import BatchingPublisher
from skillgym_core.bus.factory import make_bus
from skillgym_core.contracts.cloudevents import read_event, to_record
from skillgym_core.contracts.events import Envelope, SkillIngested
from skillgym_core.contracts.topics import ALL_TOPICS, dlq
from skillgym_core.errors import PoisonEventError
from skillgym_core.settings import CommonSettings
from skillgym_core.store.factory import make_store
from skillgym_core.store.write_behind import WriteBehindStore

from skillgym.summary import read_build_reports, summarize

# skill-ingested events handed to the broker together (one flush, every acknowledgement checked)
PUBLISH_BATCH = 500


def ingest_and_publish(sources: list[Path], out_dir: Path, *, publish: bool) -> Any:
    """Ingest in flat memory (records stream to ``out_dir/skills.jsonl``); with ``publish``,
    accepted skills go to the configured store and each one's event to the configured bus as
    soon as it is decided."""
    from skillgym_ingest.cli import ingest_command
    from skillgym_ingest.pipeline import RecordWriter, ingest, write_funnel

    settings = CommonSettings()
    if not publish:
        return ingest_command(sources, out_dir, keep_records=False)
    store = WriteBehindStore(make_store(settings))
    bus = make_bus(settings)
    bus.ensure_topics([*ALL_TOPICS, *(dlq(t) for t in ALL_TOPICS)])

    # an event goes out only once the skill's files and record it points to are stored
    publisher = BatchingPublisher(bus, batch_size=PUBLISH_BATCH, before_flush=store.wait)

    def emit(payload: SkillIngested) -> None:
        record = to_record(Envelope.wrap(payload, producer="ingest", correlation_id=settings.correlation_id),
                           settings.event_mode)
        publisher.add(record.topic, record.key, record.value, record.headers)

    try:
        with RecordWriter(out_dir) as writer, publisher:
            result = ingest(sources, store=store, progress=True, on_record_json=writer.write_json,
                            on_event=emit, keep=False)
        write_funnel(result.funnel, out_dir)
    finally:
        try:
            store.close()
        finally:
            bus.close()
    if settings.pushgateway_url:
        push_to_gateway(settings.pushgateway_url, job="skillgym-ingest", registry=REGISTRY,
                        grouping_key={"run": settings.correlation_id})
    return result


def read_all_events(settings: CommonSettings, idle_s: float = 5.0, max_s: float = 60.0) -> list[Envelope]:
    """Every event on every main topic, read with a throw-away consumer group."""
    bus = make_bus(settings)
    subscription = bus.subscribe(ALL_TOPICS, f"skillgym-summary-{uuid.uuid4().hex[:8]}", from_beginning=True)
    events: list[Envelope] = []
    started = last = time.monotonic()
    try:
        while time.monotonic() - last < idle_s and time.monotonic() - started < max_s:
            batch = subscription.poll(timeout_s=1.0, max_records=500)
            if batch:
                last = time.monotonic()
            for delivery in batch:
                try:
                    events.append(read_event(delivery))
                except PoisonEventError:
                    continue
    finally:
        subscription.close()
        bus.close()
    return events


def summarize_bus(*, skills_seen: int, skills_accepted: int, idle_s: float = 5.0) -> dict[str, Any]:
    settings = CommonSettings()
    events = read_all_events(settings, idle_s=idle_s)
    return summarize(events, skills_seen=skills_seen, skills_accepted=skills_accepted,
                     build_reports=read_build_reports(make_store(settings)))
