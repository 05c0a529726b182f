"""The soak's audit on hand-made records: what counts as lost, duplicated or redelivered, and
which fault it is put down to."""

from __future__ import annotations

from tests.e2e.soak.audit import Injection, audit
from tests.e2e.soak.broker import Record


def record(topic: str, event_id: str, at: float, **payload: object) -> Record:
    return Record(topic, 0, 0, at, event_id, dict(payload))


def injection(fault: str, started: float) -> Injection:
    return Injection(fault, "kill", ("builder",), True, started, started + 1, 2.0)


REFERENCE = [
    record("skill-ingested", "s1", 1, skill_id="a"),
    record("env-built", "b1", 2, task_id="t1", skill_id="a"),
    record("env-built", "b2", 2, task_id="t2", skill_id="a"),
    record("env-reviewed", "r1", 3, task_id="t1", skill_id="a"),
    record("env-reviewed", "r2", 3, task_id="t2", skill_id="a"),
]
FAULTS = [injection("first", 100), injection("second", 200)]


def test_a_clean_copy_of_the_reference_has_nothing_to_report() -> None:
    result = audit(REFERENCE, REFERENCE, FAULTS, reference_examples=set(), dataset_manifests={})
    assert (result.total.lost, result.total.duplicated, result.total.redelivered) == (0, 0, 0)
    assert all(t.distinct == t.expected for t in result.topics.values())


def test_a_missing_event_is_lost_where_its_task_was_last_seen() -> None:
    run = [
        record("skill-ingested", "s1", 90, skill_id="a"),
        record("env-built", "b1", 110, task_id="t1", skill_id="a"),
        record("env-built", "b2", 150, task_id="t2", skill_id="a"),
        record("env-reviewed", "r1", 250, task_id="t1", skill_id="a"),
    ]
    result = audit(REFERENCE, run, FAULTS, reference_examples=set(), dataset_manifests={})
    assert result.topics["env-reviewed"].lost == ["r2"]
    assert [(r.fault, r.lost) for r in result.rows] == [("first", 1), ("second", 0)]


def test_one_id_twice_is_a_redelivery_and_a_new_id_a_duplicated_artifact() -> None:
    run = [*REFERENCE, record("env-built", "b1", 210, task_id="t1"), record("env-built", "b9", 120, task_id="t1")]
    result = audit(REFERENCE, run, FAULTS, reference_examples=set(), dataset_manifests={})
    built = result.topics["env-built"]
    assert (built.records, built.distinct, built.redelivered, built.extra) == (4, 3, 1, ["b9"])
    assert [(r.fault, r.duplicated, r.redelivered) for r in result.rows] == [("first", 1, 0), ("second", 0, 1)]


def test_training_counts_once_per_dataset_version() -> None:
    done = record("training-completed", "c1", 300, run_id="run-1", dataset_key="datasets/d1/chat.jsonl")
    again = record("training-completed", "c1", 301, run_id="run-1", dataset_key="datasets/d1/chat.jsonl")
    other = record("training-completed", "c2", 302, run_id="run-2", dataset_key="datasets/d1/chat.jsonl")
    manifests = {"datasets/d1/chat.jsonl": {"x", "y"}}

    once = audit(REFERENCE, [*REFERENCE, done, again], FAULTS, reference_examples={"x", "y"}, dataset_manifests=manifests)
    assert (once.training.versions, once.training.completions, once.training.complete_dataset) == (1, 1, True)
    assert (once.lost, once.duplicated, once.total.redelivered) == (0, 0, 1)

    twice = audit(REFERENCE, [*REFERENCE, done, other], FAULTS, reference_examples={"x", "y"}, dataset_manifests=manifests)
    assert twice.training.duplicated == 1
    assert twice.rows[-1].duplicated == 1

    partial = audit(REFERENCE, [*REFERENCE, done], FAULTS, reference_examples={"x", "y", "z"}, dataset_manifests=manifests)
    assert partial.lost == 1


def test_a_dead_letter_the_clean_run_did_not_write_is_reported() -> None:
    letter = record("env-built.dlq", "b2", 205, task_id="t2")
    result = audit(REFERENCE, [*REFERENCE, letter], FAULTS, reference_examples=set(), dataset_manifests={})
    assert result.new_dead_letters == {"env-built.dlq": ["b2"]}
    assert result.rows[1].dead_lettered == 1
