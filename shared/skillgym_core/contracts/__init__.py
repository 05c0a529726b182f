"""Versioned contracts shared by every service, and the public surface for services outside
SkillGym that react to its events:

- the topics (:mod:`.topics`) and who publishes and consumes them (:mod:`.topology`);
- the typed payload models and the in-process :class:`Envelope` (:mod:`.events`);
- the CloudEvents codec: an event to a Kafka record and back, in binary or structured content
  mode (:mod:`.cloudevents`);
- the published JSON Schemas and AsyncAPI document (:mod:`.schemas`, :mod:`.asyncapi`) and the
  compatibility check that keeps them (:mod:`.compatibility`);
- :class:`~skillgym_core.contracts.consumer.EventConsumer`, a consumer with manual commits and
  dead letters (import it from :mod:`.consumer`).

Within a major version payloads change only by adding optional fields: ignore fields you do
not know."""

from skillgym_core.contracts.cloudevents import (
    EventMode,
    event_type,
    from_record,
    read_event,
    schema_id,
    to_record,
    to_structured,
)
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

__all__ = [
    "AnyPayload",
    "EnvBuilt",
    "EnvFeedback",
    "EnvReviewed",
    "EnvValidated",
    "Envelope",
    "EventMode",
    "HardeningRequested",
    "Payload",
    "SkillIngested",
    "TrainingCompleted",
    "TrajectoryVerified",
    "event_type",
    "from_record",
    "read_event",
    "schema_id",
    "to_record",
    "to_structured",
]
