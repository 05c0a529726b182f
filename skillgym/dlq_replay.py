"""Replaying dead letters: a letter's original event is published back onto its original topic
once. Which letters were replayed is kept in the store, per event id, so a second replay skips
them; a letter whose event the failing service has handled since is resolved and left alone.

Replaying twice by accident is harmless besides: event ids are content-derived, so a service
that already handled the event answers it from its done marker."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from skillgym_core import keys
from skillgym_core.bus.base import Bus
from skillgym_core.bus.dlq import DeadLetter
from skillgym_core.store.base import Store, get_json, put_json

LetterStatus = Literal["remaining", "replayed", "resolved"]


@dataclass
class ReplayReport:
    replayed: int = 0  # letters whose event was published in this replay
    already_replayed: int = 0  # skipped: an earlier replay published them
    resolved: int = 0  # skipped: the service handled the event since
    not_replayable: int = 0  # their bytes are no event: replaying would only dead-letter them again
    remaining: int = 0  # letters read that are neither replayed nor resolved, after this replay

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class ReplayLedger:
    def __init__(self, store: Store) -> None:
        self.store = store

    def status(self, letter: DeadLetter) -> LetterStatus:
        handled = letter.service and letter.event is not None
        if handled and self.store.exists(keys.event_done(str(letter.service), letter.id)):
            return "resolved"
        return "replayed" if [letter.partition, letter.offset] in self._replayed(letter)["letters"] else "remaining"

    def _replayed(self, letter: DeadLetter) -> dict[str, Any]:
        key = keys.dlq_replayed(letter.topic, letter.id)
        if self.store.exists(key):
            found: dict[str, Any] = get_json(self.store, key)
            return found
        return {"event_id": letter.id, "topic": letter.topic, "letters": [], "replays": []}

    def record(self, letters: Sequence[DeadLetter]) -> None:
        """Mark ``letters`` (all of one event) replayed now."""
        marker = self._replayed(letters[0])
        marker["letters"] = sorted({*map(tuple, marker["letters"]), *((lt.partition, lt.offset) for lt in letters)})
        marker["replays"].append({"at": dt.datetime.now(dt.UTC).isoformat(), "letters": len(letters)})
        put_json(self.store, keys.dlq_replayed(letters[0].topic, letters[0].id), marker)


def replay(selected: Sequence[DeadLetter], read: Sequence[DeadLetter], bus: Bus, store: Store) -> ReplayReport:
    """Publish the event of every ``selected`` letter not replayed or resolved yet, once per
    event; ``read`` (every letter read) is what ``remaining`` counts over."""
    ledger = ReplayLedger(store)
    report = ReplayReport()
    by_event: dict[tuple[str, str], list[DeadLetter]] = {}
    for letter in selected:
        by_event.setdefault((letter.topic, letter.id), []).append(letter)
    for letters in by_event.values():
        statuses = [ledger.status(letter) for letter in letters]
        report.resolved += statuses.count("resolved")
        report.already_replayed += statuses.count("replayed")
        due = [letter for letter, status in zip(letters, statuses, strict=True) if status == "remaining"]
        if not due:
            continue
        first = due[0]
        if first.value is None or first.event is None:
            report.not_replayable += len(due)
            continue
        bus.publish(first.topic, first.key, first.value, first.headers)
        ledger.record(due)
        report.replayed += len(due)
    report.remaining = sum(1 for letter in read if ledger.status(letter) == "remaining")
    return report
