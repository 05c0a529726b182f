"""What the ``skillgym serve`` tests share: a one-topic service and waiting on HTTP answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import EnvBuilt, Envelope, Payload, SkillIngested

from skillgym.serve import ServeSettings
from tests.support import waiting


class EchoBuilder:
    name = "echo"
    consumes: tuple[str, ...] = (topics.SKILL_INGESTED,)

    def handle(self, event: Envelope) -> Sequence[Payload]:
        skill = event.payload_as(SkillIngested)
        return [EnvBuilt(task_id=f"task-{skill.skill_id}", skill_id=skill.skill_id, package_key="k", template="t")]


FAST = ServeSettings(poll_timeout_s=0.05, probe_interval_s=0.05, retry_backoff_s=0.02, retry_backoff_max_s=0.1)


def skill_event(skill_id: str = "skill-1") -> Envelope:
    payload = SkillIngested(skill_id=skill_id, name="s", record_key="r", files_key="f")
    return Envelope.wrap(payload, producer="test", correlation_id="c")


def wait_for(condition: Callable[[], Any], timeout_s: float = 10.0) -> Any:
    return waiting.wait_for(condition, timeout_s, every_s=0.02)


def readiness(base: str) -> tuple[int, dict[str, Any]]:
    response = httpx.get(base + "/readyz")
    return response.status_code, response.json()


def wait_for_readiness(base: str, code: int) -> dict[str, Any]:
    """The /readyz body, once it answers ``code``."""
    return dict(wait_for(lambda: (answer := readiness(base))[0] == code and answer)[1])
