"""Who publishes and who consumes each topic. SkillGym's services consume in the consumer group
``skillgym-<service>`` (behind the topic prefix, when one is set) and dead-letter what they give
up on to the topic's ``.dlq``; nothing of SkillGym consumes training-completed: it is there for
other services to react to."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from skillgym_core.contracts import topics
from skillgym_core.contracts.events import Payload, payload_types

GROUP_PREFIX = "skillgym-"

PUBLISHERS: dict[str, tuple[str, ...]] = {
    topics.SKILL_INGESTED: ("ingest",),
    topics.ENV_BUILT: ("builder",),
    topics.ENV_REVIEWED: ("reviewer",),
    topics.ENV_FEEDBACK: ("reviewer",),
    topics.ENV_VALIDATED: ("validator",),
    topics.TRAJECTORY_VERIFIED: ("sampler", "envserver"),
    topics.HARDENING_REQUESTED: ("sampler", "envserver"),
    topics.TRAINING_COMPLETED: ("trainer",),
}
CONSUMERS: dict[str, tuple[str, ...]] = {
    topics.SKILL_INGESTED: ("builder",),
    topics.ENV_BUILT: ("reviewer",),
    topics.ENV_REVIEWED: ("validator",),
    topics.ENV_FEEDBACK: ("builder",),
    topics.ENV_VALIDATED: ("sampler",),
    topics.TRAJECTORY_VERIFIED: ("trainer",),
    topics.HARDENING_REQUESTED: ("builder",),
    topics.TRAINING_COMPLETED: (),
}


def consumer_group(service: str) -> str:
    return GROUP_PREFIX + service


@dataclass(frozen=True)
class Route:
    topic: str
    payload: builtins.type[Payload]
    publishers: tuple[str, ...]
    consumers: tuple[str, ...]

    @property
    def key_field(self) -> str:
        return self.payload.key_field


def routes() -> tuple[Route, ...]:
    """One route per topic, in the order of :data:`topics.ALL_TOPICS`."""
    by_topic = {model.topic: model for model in payload_types()}
    return tuple(Route(t, by_topic[t], PUBLISHERS[t], CONSUMERS[t]) for t in topics.ALL_TOPICS)
