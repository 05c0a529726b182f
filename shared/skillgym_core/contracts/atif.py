"""Agent Trajectory Interchange Format (ATIF v1.x, Harbor RFC 0001) and the verification record.

All ATIF models forbid extra keys; ``extra`` dicts are the extension point."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ATIF_VERSION = "ATIF-v1.7"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCall(_Strict):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]
    extra: dict[str, Any] | None = None


class SubagentTrajectoryRef(_Strict):
    trajectory_id: str | None = None
    trajectory_path: str | None = None
    session_id: str | None = None
    extra: dict[str, Any] | None = None


class ObservationResult(_Strict):
    source_call_id: str | None = None
    content: str | list[dict[str, Any]] | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Strict):
    results: list[ObservationResult]


class Metrics(_Strict):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Strict):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = None
    extra: dict[str, Any] | None = None


class Agent(_Strict):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None


class Step(_Strict):
    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    message: str | list[dict[str, Any]]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _agent_only_fields(self) -> Step:
        if self.source != "agent":
            for name in ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"):
                if getattr(self, name) is not None:
                    raise ValueError(f"field {name!r} is only allowed on agent steps")
        if self.observation is not None:
            call_ids = {call.tool_call_id for call in self.tool_calls or []}
            for result in self.observation.results:
                if result.source_call_id is not None and result.source_call_id not in call_ids:
                    raise ValueError(
                        f"observation source_call_id {result.source_call_id!r} matches no tool call"
                    )
        return self


class Trajectory(_Strict):
    schema_version: str = ATIF_VERSION
    session_id: str | None = None  # optional since ATIF-v1.7 (run-scoped, not document-scoped)
    trajectory_id: str | None = None
    agent: Agent
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    subagent_trajectories: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _sequential_steps(self) -> Trajectory:
        if not self.schema_version.startswith("ATIF-v1."):
            raise ValueError(f"unsupported ATIF schema_version {self.schema_version!r}")
        for index, step in enumerate(self.steps, start=1):
            if step.step_id != index:
                raise ValueError(f"step_id must be sequential from 1; got {step.step_id} at {index}")
        return self


class VerificationRecord(_Strict):
    """The trusted verifier's judgement of one run, stored beside the ATIF trajectory."""

    schema_version: Literal["1.0"] = "1.0"
    trajectory_id: str
    task_id: str
    harness: str
    model: str
    prompt_variant: str = "default"
    skill_provided: bool = True
    reward: float
    rewards: dict[str, float] = Field(default_factory=dict)
    passed: bool
    failure_type: str | None = None
    agent_outcome: str = "ok"
    verifier_stdout: str = ""
    verifier_stderr: str = ""
    timings: dict[str, float] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)
    tool_calls: int = 0
    steps: int = 0
    skill_read: bool = False
    skill_id: str | None = None
    skill_name: str | None = None
    category: str | None = None
    task_steps: list[dict[str, Any]] | None = None  # a multi-step task's steps: name, reward, passed, ...
    task_validated: bool = True  # false: the task was never proven (it ships no reference solution)
