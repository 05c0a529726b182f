"""Event contracts: every payload survives the wire, ids follow content, bad bytes are poison."""

from __future__ import annotations

import json
import typing

import pytest
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import (
    AnyPayload,
    EnvBuilt,
    Envelope,
    EnvFeedback,
    EnvReviewed,
    EnvValidated,
    HardeningRequested,
    Payload,
    SkillIngested,
    TrainingCompleted,
    TrajectoryVerified,
)
from skillgym_core.errors import PoisonEventError

SAMPLES: list[Payload] = [
    SkillIngested(
        skill_id="skill-1",
        name="pdf",
        record_key="skills/skill-1/record.json",
        files_key="skills/skill-1/files.tar.gz",
        category="docs",
    ),
    EnvBuilt(task_id="task-1", skill_id="skill-1", package_key="tasks/task-1/package.tar.gz", template="cli"),
    EnvReviewed(
        task_id="task-1",
        skill_id="skill-1",
        package_key="tasks/task-1/package.tar.gz",
        approved=False,
        failure_type="leaky_instruction",
        reasons=["mentions the answer"],
        revision=1,
    ),
    EnvFeedback(task_id="task-1", skill_id="skill-1", failure_type="flaky", reasons=["r"], attempt=2),
    EnvValidated(
        task_id="task-1",
        skill_id="skill-1",
        package_key="tasks/task-1/package.tar.gz",
        valid=True,
        label="skill-dep",
    ),
    TrajectoryVerified(
        trajectory_id="traj-1",
        task_id="task-1",
        skill_id="skill-1",
        harness="mini",
        model="m",
        passed=True,
        reward=1.0,
        atif_key="trajectories/traj-1/atif.json",
        verification_key="trajectories/traj-1/verification.json",
    ),
    HardeningRequested(task_id="task-1", skill_id="skill-1", pass_rate=0.95, trajectory_keys=["a", "b"]),
    TrainingCompleted(
        run_id="run-1",
        dataset_key="datasets/d/train.jsonl",
        checkpoint_key="training/run-1/ckpt",
        metrics_key="training/run-1/metrics.json",
        examples=10,
        steps=5,
        loss_first=2.5,
        loss_last=1.25,
    ),
]


def _union_members() -> set[type]:
    union = typing.get_args(AnyPayload)[0]
    return set(typing.get_args(union))


def test_samples_cover_every_payload_type() -> None:
    assert {type(sample) for sample in SAMPLES} == _union_members()
    assert {sample.topic for sample in SAMPLES} == set(topics.ALL_TOPICS)


@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_round_trip_through_bytes(payload: Payload) -> None:
    event = Envelope.wrap(payload, producer="tests", correlation_id="corr-1")
    raw = event.to_bytes()

    decoded = Envelope.from_bytes(raw)

    assert decoded == event
    assert type(decoded.payload) is type(payload)
    assert decoded.type == payload.topic
    assert decoded.key == payload.key()
    wire = json.loads(raw)
    assert wire["schema_version"] == "1.0"
    assert wire["payload"]["kind"] == type(payload).model_fields["kind"].default


@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_event_id_depends_on_content_only(payload: Payload) -> None:
    first = Envelope.wrap(payload, producer="a", correlation_id="c1")
    again = Envelope.wrap(payload.model_copy(deep=True), producer="b", correlation_id="c2")
    assert first.event_id == again.event_id
    assert first.time <= again.time

    changed = payload.model_copy(update={payload.key_field: "other-id"})
    assert Envelope.wrap(changed, producer="a", correlation_id="c1").event_id != first.event_id


def _valid_wire() -> dict[str, typing.Any]:
    return json.loads(Envelope.wrap(SAMPLES[0], producer="p", correlation_id="c").to_bytes())


def _mutated(**changes: typing.Any) -> bytes:
    wire = _valid_wire()
    wire.update(changes)
    return json.dumps(wire).encode()


def _payload_mutated(**changes: typing.Any) -> bytes:
    wire = _valid_wire()
    wire["payload"].update(changes)
    return json.dumps(wire).encode()


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json at all",
        b"\xff\xfe\x00binary",
        b"[]",
        b'{"schema_version": "1.0"}',
        _mutated(schema_version="2.0"),
        _mutated(unexpected="field"),
        _mutated(time="yesterday"),
        _payload_mutated(kind="no-such-kind"),
        _payload_mutated(skill_id=None),
        _payload_mutated(extra="nope"),
    ],
    ids=[
        "empty",
        "text",
        "binary",
        "array",
        "missing-fields",
        "future-version",
        "extra-envelope-field",
        "bad-time",
        "unknown-kind",
        "null-required",
        "extra-payload-field",
    ],
)
def test_poison_bytes_raise_typed_error(raw: bytes) -> None:
    with pytest.raises(PoisonEventError) as caught:
        Envelope.from_bytes(raw)
    assert caught.value.reason == "poison"
    assert caught.value.to_dict()["error"] == "PoisonEventError"
    assert "raw_prefix" in caught.value.details


def test_payload_as_rejects_the_wrong_type() -> None:
    event = Envelope.wrap(SAMPLES[1], producer="p", correlation_id="c")
    assert event.payload_as(EnvBuilt) is event.payload
    with pytest.raises(PoisonEventError) as caught:
        event.payload_as(SkillIngested)
    assert caught.value.details["event_id"] == event.event_id
