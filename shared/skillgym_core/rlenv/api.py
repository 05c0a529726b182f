"""The episode API's request and response bodies (``/v1/episodes``), shared by the server and
its clients. An episode is one agent attempt at one validated task in its own sandboxed
workspace: start it, call tools one step at a time, finish it to get the trusted verifier's
reward.

On a multi-step task, finishing grades the current step: while steps remain and the step met
its gate, the result says ``done = false`` and carries the next step's instruction; the client
goes on calling tools in the same episode (the same workspace) and finishes again. The last
finish (``done = true``) carries the task's reward and every step's verdict."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

RewardMode = Literal["binary", "rubric", "shaped"]
TOOL_NAMES = ("bash", "read_file", "write_file")

def tool_schemas(workdir: str = "/app") -> list[dict[str, Any]]:
    """The episode's tools, as OpenAI function schemas, naming the task's working directory."""
    return [
        {"type": "function", "function": {
            "name": "bash",
            "description": f"Run a shell command in the task's workspace ({workdir}) and return its output and exit "
                           "code.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string", "description": "the command"}},
                           "required": ["command"]}}},
        {"type": "function", "function": {
            "name": "read_file",
            "description": f"Return the text of a file (at most 64 KiB); relative paths are inside {workdir}.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "the file"}},
                           "required": ["path"]}}},
        {"type": "function", "function": {
            "name": "write_file",
            "description": f"Write text to a file, creating its folders; relative paths are inside {workdir}.",
            "parameters": {"type": "object", "properties": {
                "path": {"type": "string", "description": "the file"},
                "content": {"type": "string", "description": "the whole new text of the file"}},
                "required": ["path", "content"]}}},
    ]  # fmt: skip


TOOL_SCHEMAS = tool_schemas()


class EpisodeStatus(StrEnum):
    OPEN = "open"
    FINISHED = "finished"
    EXPIRED = "expired"  # the client went away; the janitor ended it
    DELETED = "deleted"


class SampleSpec(BaseModel):
    """Which task to draw when no task id is given: filters, then the curriculum's preference for
    tasks the current policy solves sometimes (neither never nor always)."""

    family: str | None = None
    category: str | None = None
    difficulty: str | None = None
    seed: int | None = None


class StartEpisode(BaseModel):
    task_id: str | None = None
    sample: SampleSpec | None = None
    skill_provided: bool = True
    reward: RewardMode = "binary"
    policy: str = Field("unnamed-policy", max_length=200, description="the model being trained, recorded with the rollout")
    max_steps: int | None = Field(None, ge=1, le=1000)
    ttl_s: float | None = Field(None, gt=0, description="idle time after which the janitor ends the episode")

    @model_validator(mode="after")
    def _one_way_to_choose(self) -> StartEpisode:
        if self.task_id and self.sample:
            raise ValueError("give task_id or sample, not both")
        return self


class EpisodeLimits(BaseModel):
    max_steps: int
    step_timeout_s: float
    ttl_s: float
    expires_at: float  # unix time, pushed back by every request


class EpisodeStarted(BaseModel):
    episode_id: str
    task_id: str
    instruction: str
    tools: list[dict[str, Any]]
    limits: EpisodeLimits
    skill_provided: bool
    skills_path: str | None
    workdir: str = "/app"
    reward: RewardMode
    task_step: str | None = None  # a multi-step task's first step
    task_steps: list[str] = Field(default_factory=list)


class StepRequest(BaseModel):
    """One tool call: ``tool`` plus ``arguments`` (a JSON object, or the JSON text of one as
    models emit it). A call that is not one of the tools, or whose arguments do not fit, is
    answered with an error observation and counted as malformed."""

    tool: str = Field(max_length=200)
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class StepResult(BaseModel):
    step: int
    observation: str
    exit_code: int | None = None
    malformed: bool = False
    truncated: bool = False  # the observation was cut to its limit
    steps_left: int


class FinishResult(BaseModel):
    episode_id: str
    task_id: str
    trajectory_id: str
    reward: float
    passed: bool
    reward_mode: RewardMode
    components: dict[str, float]  # verdict, rubric, format_penalty
    rubric: dict[str, float]
    failure_type: str | None = None
    steps: int
    malformed_calls: int
    done: bool = True  # false: a multi-step task's next step is open (next_instruction)
    task_step: str | None = None  # the step this result grades
    next_step: str | None = None
    next_instruction: str | None = None
    task_steps: list[dict[str, Any]] | None = None  # the steps graded so far, in order


class EpisodeState(BaseModel):
    episode_id: str
    task_id: str
    status: EpisodeStatus
    steps: int
    max_steps: int
    malformed_calls: int
    created_at: float
    expires_at: float
    result: FinishResult | None = None
