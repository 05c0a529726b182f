"""Kafka topic names. The four main topics are fixed; the rest carry the feedback loops."""

from __future__ import annotations

SKILL_INGESTED = "skill-ingested"
ENV_BUILT = "env-built"
ENV_REVIEWED = "env-reviewed"
ENV_FEEDBACK = "env-feedback"
ENV_VALIDATED = "env-validated"
TRAJECTORY_VERIFIED = "trajectory-verified"
HARDENING_REQUESTED = "hardening-requested"
TRAINING_COMPLETED = "training-completed"

ALL_TOPICS: tuple[str, ...] = (
    SKILL_INGESTED,
    ENV_BUILT,
    ENV_REVIEWED,
    ENV_FEEDBACK,
    ENV_VALIDATED,
    TRAJECTORY_VERIFIED,
    HARDENING_REQUESTED,
    TRAINING_COMPLETED,
)

DLQ_SUFFIX = ".dlq"


def dlq(topic: str) -> str:
    return topic + DLQ_SUFFIX
