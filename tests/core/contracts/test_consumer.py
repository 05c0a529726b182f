"""EventConsumer: typed events to the handler, a commit per settled record, dead letters for
records that hold no event and for events whose handler keeps failing, with their headers kept."""

from __future__ import annotations

import json

import pytest
from skillgym_core.bus.dlq import parse_dead_letter
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import publish_event, to_record
from skillgym_core.contracts.consumer import EventConsumer
from skillgym_core.contracts.events import Envelope, SkillIngested
from skillgym_core.errors import TransientError

from tests.core.test_worker import skill_event


def consumer(bus: MemoryBus, **options: object) -> EventConsumer:
    return EventConsumer(bus, [topics.SKILL_INGESTED], "my-app", pause=lambda s: None, **options)  # type: ignore[arg-type]


def test_handles_typed_events_in_any_format_and_commits_each() -> None:
    bus = MemoryBus()
    events = [skill_event(f"s{i}") for i in range(3)]
    publish_event(bus, events[0], "binary")
    publish_event(bus, events[1], "structured")
    bus.publish(events[2].type, events[2].key, events[2].to_bytes())
    seen: list[str] = []

    stats = consumer(bus).run(lambda e: seen.append(e.payload_as(SkillIngested).skill_id), max_events=3)

    assert seen == ["s0", "s1", "s2"] and (stats.handled, stats.dead_lettered) == (3, 0)
    assert bus.pending("my-app", [topics.SKILL_INGESTED]) == 0


def test_poison_and_hopeless_events_are_dead_lettered_with_their_headers() -> None:
    bus = MemoryBus()
    bus.publish(topics.SKILL_INGESTED, "junk", b"{not an event")
    failing = skill_event("bad")
    publish_event(bus, failing, "binary")
    calls: list[str] = []

    def handle(event: Envelope) -> None:
        calls.append(event.event_id)
        raise TransientError("downstream is down")

    stats = consumer(bus, max_attempts=2, name="reporting").run(handle, max_events=2)

    assert (stats.handled, stats.dead_lettered) == (0, 2) and len(calls) == 2
    letters = [parse_dead_letter(d) for d in bus.records(topics.dlq(topics.SKILL_INGESTED))]
    assert [(lt.reason, lt.attempts, lt.service) for lt in letters] == [("poison", 0, "reporting"), ("transient", 2, "reporting")]
    assert letters[1].event == failing and letters[1].headers == to_record(failing, "binary").headers
    assert bus.pending("my-app", [topics.SKILL_INGESTED]) == 0


def test_a_failure_to_dead_letter_leaves_the_rest_of_the_batch_to_be_read_again() -> None:
    class NoDeadLetters(MemoryBus):
        def publish(self, topic: str, key: str | None, value: bytes, headers: tuple[tuple[str, bytes], ...] = ()) -> None:
            if topic.endswith(".dlq"):
                raise TransientError("broker down")
            super().publish(topic, key, value, headers)

    bus = NoDeadLetters()
    bus.publish(topics.SKILL_INGESTED, "junk", b"junk")
    publish_event(bus, skill_event("after"), "binary")
    reader = consumer(bus)
    with pytest.raises(TransientError):
        reader.poll_once(lambda e: None, timeout_s=0)
    assert bus.pending("my-app", [topics.SKILL_INGESTED]) == 2
    assert [json.loads(d.value)["kind"] for d in reader.subscription.poll(timeout_s=0)[1:]] == ["skill-ingested"]


def test_run_stops_when_idle() -> None:
    assert consumer(MemoryBus()).run(lambda e: None, idle_timeout_s=0.05, poll_timeout_s=0.01).handled == 0
