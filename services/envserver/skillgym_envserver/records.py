"""An episode's durable record: one JSON file per episode in the state folder, rewritten
atomically after every change, so a restarted server resumes every open episode by id."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from skillgym_core.rlenv.api import EpisodeState, EpisodeStatus, FinishResult, RewardMode


class ToolStep(BaseModel):
    tool: str
    arguments: dict[str, Any] | str
    observation: str
    exit_code: int | None = None
    malformed: bool = False
    started_at: float
    duration_s: float
    task_step: str | None = None  # the multi-step task's step the call was made in


class Episode(BaseModel):
    episode_id: str
    task_id: str
    skill_id: str
    skill_name: str
    category: str | None = None
    family: str
    skill_provided: bool
    reward_mode: RewardMode
    policy: str
    max_steps: int
    ttl_s: float
    created_at: float
    last_active_at: float
    status: EpisodeStatus = EpisodeStatus.OPEN
    instruction: str
    workspace: str
    workdir: str = "/app"  # where the workspace is mounted in the task's runs
    session: dict[str, Any] | None = None  # how to reach the episode's sandbox session again
    steps: list[ToolStep] = Field(default_factory=list)
    result: FinishResult | None = None
    step_names: list[str] = Field(default_factory=list)  # a multi-step task's steps started so far
    instructions: list[str] = Field(default_factory=list)  # and their instructions
    step_verdicts: list[dict[str, Any]] = Field(default_factory=list)  # every graded step's verdict
    step_result: FinishResult | None = None  # the last step's finish, answered again until a tool call

    @property
    def current_step(self) -> str | None:
        return self.step_names[-1] if self.step_names else None

    @property
    def malformed_calls(self) -> int:
        return sum(step.malformed for step in self.steps)

    @property
    def expires_at(self) -> float:
        return self.last_active_at + self.ttl_s

    def state(self) -> EpisodeState:
        return EpisodeState(
            episode_id=self.episode_id, task_id=self.task_id, status=self.status, steps=len(self.steps),
            max_steps=self.max_steps, malformed_calls=self.malformed_calls, created_at=self.created_at,
            expires_at=self.expires_at, result=self.result,
        )  # fmt: skip


class EpisodeRecords:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def path(self, episode_id: str) -> Path:
        return self.directory / f"{episode_id}.json"

    def save(self, episode: Episode) -> None:
        handle, temporary = tempfile.mkstemp(prefix=f".{episode.episode_id}-", dir=self.directory)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(episode.model_dump_json())
        os.replace(temporary, self.path(episode.episode_id))

    def load_all(self) -> list[Episode]:
        episodes = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                episodes.append(Episode.model_validate_json(path.read_bytes()))
            except ValueError:
                path.rename(path.with_suffix(".unreadable"))
        return episodes
