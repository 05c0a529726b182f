"""What a run under faults published, against the clean run of the same input.

Event ids are content-derived, so the two runs' ids are comparable topic by topic: an id of the
clean run missing from the faulted one is lost; an id only the faulted run has is a duplicated
artifact (the same work done twice, differently); the same id published more than once is an
at-least-once redelivery, allowed and counted apart. ``training-completed`` is checked per
dataset version instead (the clean run trains nothing; see :func:`audit`)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillgym_core.contracts.topics import ALL_TOPICS, TRAINING_COMPLETED, dlq

from tests.e2e.soak.broker import Record

DLQ_TOPICS = tuple(dlq(t) for t in ALL_TOPICS)
COMPARED_TOPICS = tuple(t for t in ALL_TOPICS if t != TRAINING_COMPLETED)


@dataclass(frozen=True)
class Injection:
    fault: str
    kind: str
    victims: tuple[str, ...]
    mid_stage: bool  # struck while its victims had work in flight
    started: float  # seconds since the epoch
    lifted: float
    recovered_s: float | None  # from lifted until every service was ready and every victim settled a record again
    note: str = ""


@dataclass
class TopicTally:
    topic: str
    expected: int  # distinct ids of the clean run
    records: int
    distinct: int
    lost: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def redelivered(self) -> int:
        return self.records - self.distinct


@dataclass
class Training:
    """``training-completed`` of the faulted run, one dataset version per distinct dataset."""

    versions: int  # datasets a completion was announced for
    completions: int  # distinct completion events
    records: int
    complete_dataset: bool  # one version holds exactly the examples the clean run recorded
    expected: bool  # the clean run recorded examples, so a run over them all is due

    @property
    def duplicated(self) -> int:
        return self.completions - self.versions

    @property
    def lost(self) -> int:
        return int(self.expected and not self.complete_dataset)


@dataclass
class Row:
    fault: str
    victims: tuple[str, ...]
    mid_stage: bool | None
    lost: int = 0
    duplicated: int = 0
    redelivered: int = 0
    dead_lettered: int = 0
    recovered_s: float | None = None


@dataclass
class Audit:
    topics: dict[str, TopicTally]
    training: Training
    new_dead_letters: dict[str, list[str]]  # per dead-letter topic: ids the clean run did not dead-letter
    rows: list[Row]
    total: Row

    @property
    def lost(self) -> int:
        return sum(len(t.lost) for t in self.topics.values()) + self.training.lost

    @property
    def duplicated(self) -> int:
        return sum(len(t.extra) for t in self.topics.values()) + self.training.duplicated


def _ids(records: Sequence[Record], topic: str) -> dict[str, list[Record]]:
    by_id: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        if record.topic == topic:
            by_id[record.event_id].append(record)
    return by_id


class _Windows:
    """Which injection a moment of the faulted run belongs to: the last one started by then
    (``None``: before the first)."""

    def __init__(self, injections: Sequence[Injection]) -> None:
        self.starts = [i.started for i in injections]

    def of(self, moment: float | None) -> int | None:
        if moment is None:
            return None
        index = bisect.bisect_right(self.starts, moment) - 1
        return index if index >= 0 else None


def _anchor(payload: dict[str, Any], run: Sequence[Record]) -> float | None:
    """When a lost event should have been made: the latest record of the faulted run about the
    same task (else the same skill): the input its producer never answered."""
    for field_name in ("task_id", "skill_id"):
        value = payload.get(field_name)
        times = [r.timestamp for r in run if value and r.payload.get(field_name) == value]
        if times:
            return max(times)
    return None


def _training(run: Sequence[Record], manifests: dict[str, set[str]], examples: set[str]) -> Training:
    completions = _ids(run, TRAINING_COMPLETED)
    datasets = {records[0].payload.get("dataset_key") for records in completions.values()}
    return Training(
        versions=len(datasets),
        completions=len(completions),
        records=sum(len(r) for r in completions.values()),
        complete_dataset=any(manifests.get(str(key)) == examples for key in datasets),
        expected=bool(examples),
    )


def audit(
    reference: Sequence[Record],
    run: Sequence[Record],
    injections: Sequence[Injection],
    *,
    reference_examples: set[str],
    dataset_manifests: dict[str, set[str]],
) -> Audit:
    """``dataset_manifests``: the trajectory ids of each dataset the faulted run exported, by
    the dataset key its completion names; ``reference_examples``: the trajectories the clean
    run's trainer recorded."""
    windows = _Windows(injections)
    rows = [Row(i.fault, i.victims, i.mid_stage, recovered_s=i.recovered_s) for i in injections]
    before = Row("(before the first fault)", (), None)
    unattributed = Row("(unattributed)", (), None)

    def row(moment: float | None) -> Row:
        if moment is None:
            return unattributed
        index = windows.of(moment)
        return before if index is None else rows[index]

    tallies: dict[str, TopicTally] = {}
    for topic in COMPARED_TOPICS:
        expected, seen = _ids(reference, topic), _ids(run, topic)
        tally = TopicTally(topic, len(expected), sum(len(r) for r in seen.values()), len(seen))
        tally.lost = sorted(set(expected) - set(seen))
        tally.extra = sorted(set(seen) - set(expected))
        tallies[topic] = tally
        for event_id in tally.lost:
            row(_anchor(expected[event_id][0].payload, run)).lost += 1
        for event_id in tally.extra:
            row(min(r.timestamp for r in seen[event_id])).duplicated += 1
        for records in seen.values():
            for again in sorted(records, key=lambda r: r.timestamp)[1:]:
                row(again.timestamp).redelivered += 1

    training = _training(run, dataset_manifests, reference_examples)
    completions = _ids(run, TRAINING_COMPLETED)
    for records in completions.values():
        for again in sorted(records, key=lambda r: r.timestamp)[1:]:
            row(again.timestamp).redelivered += 1
    by_dataset: dict[str, list[Record]] = defaultdict(list)
    for records in completions.values():
        by_dataset[str(records[0].payload.get("dataset_key"))].append(min(records, key=lambda r: r.timestamp))
    for firsts in by_dataset.values():
        for later in sorted(firsts, key=lambda r: r.timestamp)[1:]:
            row(later.timestamp).duplicated += 1
    unattributed.lost += training.lost

    new_dead_letters: dict[str, list[str]] = {}
    for topic in DLQ_TOPICS:
        expected, seen = _ids(reference, topic), _ids(run, topic)
        new_dead_letters[topic] = sorted(set(seen) - set(expected))
        for event_id in new_dead_letters[topic]:
            row(min(r.timestamp for r in seen[event_id])).dead_lettered += 1

    extra_rows = [r for r in (before, unattributed) if r.lost or r.duplicated or r.redelivered or r.dead_lettered]
    all_rows = [*rows, *extra_rows]
    total = Row(
        "total",
        tuple(dict.fromkeys(v for i in injections for v in i.victims)),
        None,
        lost=sum(r.lost for r in all_rows),
        duplicated=sum(r.duplicated for r in all_rows),
        redelivered=sum(r.redelivered for r in all_rows),
        dead_lettered=sum(r.dead_lettered for r in all_rows),
        recovered_s=max((i.recovered_s for i in injections if i.recovered_s is not None), default=None),
    )
    return Audit(tallies, training, {t: ids for t, ids in new_dead_letters.items() if ids}, all_rows, total)
