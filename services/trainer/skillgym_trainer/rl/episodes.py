"""What the rollouts of a training run did on the environment server: one record per episode,
shared by every environment instance of the run, so the run can report rewards, passes and the
episodes the server failed (which carry no reward rather than a silent 0)."""

from __future__ import annotations

import logging
import threading
from statistics import fmean

from pydantic import BaseModel, Field

log = logging.getLogger(__name__)


class EpisodeRecord(BaseModel):
    task_id: str
    episode_id: str | None = None
    trajectory_id: str | None = None
    reward: float | None = None  # None: the episode failed, so the rollout was not scored
    passed: bool = False
    components: dict[str, float] = Field(default_factory=dict)
    steps: int = 0
    malformed_calls: int = 0
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


class EpisodeSummary(BaseModel):
    episodes_played: int
    episodes_passed: int
    failed_episodes: int
    mean_reward: float | None
    step_errors: int


class EpisodeLog:
    """Thread-safe: a trainer may score rollouts from several threads."""

    def __init__(self) -> None:
        self._records: list[EpisodeRecord] = []
        self._step_errors = 0
        self._lock = threading.Lock()

    def add(self, record: EpisodeRecord) -> None:
        with self._lock:
            self._records.append(record)
        if record.failed:
            log.warning("episode failed: %s", record.error,
                        extra={"task_id": record.task_id, "episode_id": record.episode_id})  # fmt: skip

    def step_failed(self, episode_id: str, error: str) -> None:
        with self._lock:
            self._step_errors += 1
        log.warning("tool call failed on the server: %s", error, extra={"episode_id": episode_id})

    def records(self) -> list[EpisodeRecord]:
        with self._lock:
            return list(self._records)

    def count(self) -> int:
        with self._lock:
            return len(self._records)

    def summary(self, records: list[EpisodeRecord] | None = None) -> EpisodeSummary:
        with self._lock:
            chosen = list(self._records) if records is None else records
            step_errors = self._step_errors
        scored = [r.reward for r in chosen if r.reward is not None]
        return EpisodeSummary(
            episodes_played=len(scored),
            episodes_passed=sum(r.passed for r in chosen),
            failed_episodes=sum(r.failed for r in chosen),
            mean_reward=fmean(scored) if scored else None,
            step_errors=step_errors,
        )
