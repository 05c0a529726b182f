"""The event envelope and the payload of every topic (claim-check: payloads point at artifacts)."""

from __future__ import annotations

import builtins
import datetime as dt
import typing
from typing import Annotated, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from skillgym_core.contracts import topics
from skillgym_core.errors import PoisonEventError
from skillgym_core.ids import content_id

P = TypeVar("P", bound="Payload")

ENVELOPE_VERSION: Literal["1.0"] = "1.0"


class Payload(BaseModel):
    """Base of all payloads. ``kind`` discriminates; ``topic`` is where the event belongs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    topic: ClassVar[str]
    key_field: ClassVar[str]

    def key(self) -> str:
        return str(getattr(self, self.key_field))


class SkillIngested(Payload):
    """A skill ingest accepted: its record and its files are in the store."""

    topic = topics.SKILL_INGESTED
    key_field = "skill_id"
    kind: Literal["skill-ingested"] = "skill-ingested"
    skill_id: str
    name: str
    record_key: str = Field(description="store key of the SkillRecord JSON")
    files_key: str = Field(description="store key of the skill folder archive")
    category: str | None = None


class EnvBuilt(Payload):
    """A task (a Harbor task directory, archived in the store) built for a skill, or a revision of one."""

    topic = topics.ENV_BUILT
    key_field = "task_id"
    kind: Literal["env-built"] = "env-built"
    task_id: str
    skill_id: str
    package_key: str = Field(description="store key of the Harbor task directory archive")
    template: str
    revision: int = 0
    parent_task_id: str | None = None
    builder: str = "template"


class EnvReviewed(Payload):
    """The reviewer's verdict. Approved tasks go on to validation."""

    topic = topics.ENV_REVIEWED
    key_field = "task_id"
    kind: Literal["env-reviewed"] = "env-reviewed"
    task_id: str
    skill_id: str
    package_key: str
    approved: bool
    failure_type: str | None = None
    reasons: list[str] = Field(default_factory=list)
    report_key: str | None = None
    revision: int = 0


class EnvFeedback(Payload):
    """A rejected task goes back to the builder with what went wrong, within a budget."""

    topic = topics.ENV_FEEDBACK
    key_field = "task_id"
    kind: Literal["env-feedback"] = "env-feedback"
    task_id: str
    skill_id: str
    failure_type: str
    reasons: list[str]
    attempt: int
    report_key: str | None = None


# The reason of a task that ships no reference to prove it with: sampled all the same, its runs
# marked as runs of an unvalidated task.
NO_SOLUTION = "no_solution"


class EnvValidated(Payload):
    """The validator's verdict on an approved task. Valid tasks go on to sampling."""

    topic = topics.ENV_VALIDATED
    key_field = "task_id"
    kind: Literal["env-validated"] = "env-validated"
    task_id: str
    skill_id: str
    package_key: str
    valid: bool
    label: Literal["skill-dep", "verifier-passed", "unlabelled"] = "unlabelled"
    reasons: list[str] = Field(default_factory=list)
    report_key: str | None = None
    category: str | None = None


class TrajectoryVerified(Payload):
    """One agent run on a task, with or without the skill, checked by the task's verifier."""

    topic = topics.TRAJECTORY_VERIFIED
    key_field = "trajectory_id"
    kind: Literal["trajectory-verified"] = "trajectory-verified"
    trajectory_id: str
    task_id: str
    skill_id: str
    harness: str
    model: str
    prompt_variant: str = "default"
    skill_provided: bool = True
    passed: bool
    reward: float
    failure_type: str | None = None
    atif_key: str
    verification_key: str
    category: str | None = None


class HardeningRequested(Payload):
    """Solvers pass a task too easily: the builder is asked for a harder revision."""

    topic = topics.HARDENING_REQUESTED
    key_field = "task_id"
    kind: Literal["hardening-requested"] = "hardening-requested"
    task_id: str
    skill_id: str
    pass_rate: float
    round: int = 1
    trajectory_keys: list[str] = Field(default_factory=list)


class TrainingCompleted(Payload):
    """A fine-tuning run finished: its checkpoint and metrics are in the store."""

    topic = topics.TRAINING_COMPLETED
    key_field = "run_id"
    kind: Literal["training-completed"] = "training-completed"
    run_id: str
    dataset_key: str
    checkpoint_key: str
    metrics_key: str
    examples: int
    steps: int
    loss_first: float
    loss_last: float


AnyPayload = Annotated[
    SkillIngested
    | EnvBuilt
    | EnvReviewed
    | EnvFeedback
    | EnvValidated
    | TrajectoryVerified
    | HardeningRequested
    | TrainingCompleted,
    Field(discriminator="kind"),
]


def payload_types() -> tuple[builtins.type[Payload], ...]:
    """Every payload model, in the order of :data:`AnyPayload`."""
    union = typing.get_args(AnyPayload)[0]
    return typing.get_args(union)


def kind_of(model: builtins.type[Payload]) -> str:
    """The ``kind`` that discriminates ``model`` (the name of the topic it belongs on)."""
    return str(model.model_fields["kind"].default)


class Envelope(BaseModel):
    """What travels on the bus. ``event_id`` is derived from type, key and payload: a
    redelivered or re-emitted event has the same id, which makes consumers idempotent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["1.0"] = ENVELOPE_VERSION
    event_id: str
    type: str
    time: dt.datetime
    producer: str
    key: str
    correlation_id: str
    payload: AnyPayload

    @classmethod
    def wrap(cls, payload: Payload, *, producer: str, correlation_id: str) -> Envelope:
        data = payload.model_dump(mode="json")
        return cls(
            event_id=content_id("evt", {"type": payload.topic, "payload": data}),
            type=payload.topic,
            time=dt.datetime.now(dt.UTC),
            producer=producer,
            key=payload.key(),
            correlation_id=correlation_id,
            payload=payload,
        )

    def to_bytes(self) -> bytes:
        return self.model_dump_json().encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> Envelope:
        try:
            return _ENVELOPE.validate_json(raw)
        except ValidationError as exc:
            raise PoisonEventError(
                "event does not match the envelope contract",
                errors=exc.errors(include_url=False, include_context=False),
                raw_prefix=raw[:200].decode("utf-8", "replace"),
            ) from exc

    def payload_as(self, model: builtins.type[P]) -> P:
        if not isinstance(self.payload, model):
            raise PoisonEventError(
                f"expected {model.__name__}, got {self.payload.__class__.__name__}", event_id=self.event_id
            )
        return self.payload


_ENVELOPE = TypeAdapter(Envelope)
