"""Replaying dead letters once: what a replay published is skipped by the next one, a letter
whose event was handled since is resolved, a new failure of a replayed event is a new letter."""

from __future__ import annotations

from pathlib import Path

from skillgym_core import keys
from skillgym_core.bus.dlq import MemoryDeadLetters
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import publish_event, read_event
from skillgym_core.errors import ContractError
from skillgym_core.service import Worker
from skillgym_core.store.local import LocalStore

from skillgym.dlq_replay import ReplayLedger, replay
from tests.core.test_worker import PackageBuilder, publish, skill_event

SKILL_DLQ = topics.dlq(topics.SKILL_INGESTED)


def test_each_letter_is_replayed_once_and_handled_events_are_resolved(tmp_path: Path) -> None:
    bus, store = MemoryBus(), LocalStore(tmp_path / "store")
    failing = Worker(PackageBuilder(store, always_fail=True), bus, store, group="g", max_attempts=1)
    a, b = skill_event("skill-a"), skill_event("skill-b")
    for event in (a, a, b):  # a is delivered twice: two letters, one event
        publish(bus, event)
    bus.publish(topics.SKILL_INGESTED, "poison", b"{not json")
    failing.run_once()
    letters = MemoryDeadLetters(bus).read(SKILL_DLQ)
    assert [letter.id for letter in letters[:3]] == [a.event_id, a.event_id, b.event_id]

    first = replay(letters, letters, bus, store)
    assert first.to_dict() == {"replayed": 3, "already_replayed": 0, "resolved": 0, "not_replayable": 1, "remaining": 1}
    republished = bus.records(topics.SKILL_INGESTED)[4:]
    assert [record.value for record in republished] == [a.to_bytes(), b.to_bytes()]
    assert store.exists(keys.dlq_replayed(topics.SKILL_INGESTED, a.event_id))

    again = replay(letters, letters, bus, store)
    assert (again.replayed, again.already_replayed, again.remaining) == (0, 3, 1)
    assert len(bus.records(topics.SKILL_INGESTED)) == 6

    # The replayed a fails again (a new letter); b is handled (its letter is resolved).
    recovering = PackageBuilder(store, failures=[ContractError("still broken")])
    Worker(recovering, bus, store, group="g").run_once()
    letters = MemoryDeadLetters(bus).read(SKILL_DLQ)
    ledger = ReplayLedger(store)
    assert [ledger.status(letter) for letter in letters] == ["replayed", "replayed", "resolved", "remaining", "remaining"]

    third = replay(letters, letters, bus, store)
    assert third.to_dict() == {"replayed": 1, "already_replayed": 2, "resolved": 1, "not_replayable": 1, "remaining": 1}
    assert bus.records(topics.SKILL_INGESTED)[-1].value == a.to_bytes()


def test_only_the_selected_letters_are_replayed(tmp_path: Path) -> None:
    bus, store = MemoryBus(), LocalStore(tmp_path / "store")
    failing = Worker(PackageBuilder(store, always_fail=True), bus, store, group="g", max_attempts=1)
    for event in (skill_event("skill-a"), skill_event("skill-b")):
        publish(bus, event)
    failing.run_once()
    letters = MemoryDeadLetters(bus).read(SKILL_DLQ)

    report = replay(letters[1:], letters, bus, store)
    assert (report.replayed, report.remaining) == (1, 1)
    assert bus.records(topics.SKILL_INGESTED)[-1].value == letters[1].value


def test_a_replayed_binary_event_is_published_with_its_headers(tmp_path: Path) -> None:
    bus, store = MemoryBus(), LocalStore(tmp_path / "store")
    event = skill_event("skill-binary")
    publish_event(bus, event, "binary")
    Worker(PackageBuilder(store, always_fail=True), bus, store, group="g", max_attempts=1).run_once()
    letters = MemoryDeadLetters(bus).read(SKILL_DLQ)

    assert replay(letters, letters, bus, store).replayed == 1
    original, replayed = bus.records(topics.SKILL_INGESTED)
    assert (replayed.key, replayed.value, replayed.headers) == (original.key, original.value, original.headers)
    assert read_event(replayed) == event
