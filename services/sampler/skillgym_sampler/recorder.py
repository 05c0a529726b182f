"""Build an ATIF trajectory step by step while an agent runs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from skillgym_core.contracts.atif import (
    ATIF_VERSION,
    Agent,
    FinalMetrics,
    Metrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")


class TrajectoryRecorder:
    """Appends steps with sequential ids; tool results are attached to the step that made the calls."""

    def __init__(
        self,
        *,
        session_id: str,
        trajectory_id: str,
        agent_name: str,
        agent_version: str,
        model_name: str | None,
        tool_definitions: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id
        self.trajectory_id = trajectory_id
        self.agent = Agent(
            name=agent_name,
            version=agent_version,
            model_name=model_name,
            tool_definitions=tool_definitions,
            extra=extra,
        )
        self.steps: list[Step] = []
        self.notes: list[str] = []

    def _next_id(self) -> int:
        return len(self.steps) + 1

    def system(self, message: str, *, timestamp: str | None = None) -> Step:
        step = Step(step_id=self._next_id(), timestamp=timestamp or now_iso(), source="system", message=message)
        self.steps.append(step)
        return step

    def user(self, message: str, *, timestamp: str | None = None) -> Step:
        step = Step(step_id=self._next_id(), timestamp=timestamp or now_iso(), source="user", message=message)
        self.steps.append(step)
        return step

    def agent_step(
        self,
        message: str,
        *,
        tool_calls: list[ToolCall] | None = None,
        results: list[ObservationResult] | None = None,
        reasoning: str | None = None,
        metrics: Metrics | None = None,
        model_name: str | None = None,
        timestamp: str | None = None,
        llm_call_count: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Step:
        step = Step(
            step_id=self._next_id(),
            timestamp=timestamp or now_iso(),
            source="agent",
            message=message,
            model_name=model_name,
            reasoning_content=reasoning or None,
            tool_calls=tool_calls or None,
            observation=Observation(results=results) if results else None,
            metrics=metrics,
            llm_call_count=llm_call_count,
            extra=extra,
        )
        self.steps.append(step)
        return step

    def note(self, text: str) -> None:
        self.notes.append(text)

    def final_metrics(self, extra: dict[str, Any] | None = None) -> FinalMetrics:
        prompt = completion = cached = 0
        cost = 0.0
        seen_metrics = False
        for step in self.steps:
            if step.metrics is None:
                continue
            seen_metrics = True
            prompt += step.metrics.prompt_tokens or 0
            completion += step.metrics.completion_tokens or 0
            cached += step.metrics.cached_tokens or 0
            cost += step.metrics.cost_usd or 0.0
        return FinalMetrics(
            total_prompt_tokens=prompt if seen_metrics else None,
            total_completion_tokens=completion if seen_metrics else None,
            total_cached_tokens=cached if seen_metrics else None,
            total_cost_usd=cost if seen_metrics else None,
            total_steps=len(self.steps),
            extra=extra,
        )

    def build(self, *, final_extra: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> Trajectory:
        return Trajectory(
            schema_version=ATIF_VERSION,
            session_id=self.session_id,
            trajectory_id=self.trajectory_id,
            agent=self.agent,
            steps=list(self.steps),
            notes="\n".join(self.notes) or None,
            final_metrics=self.final_metrics(final_extra),
            extra=extra,
        )
