"""The task blueprint ``B`` (Skill2Env): what the task asks, what makes it hard, what the agent
may see, and how success is judged. It drives instruction, workspace and verifier together."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Blueprint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    goal: str
    challenge: str
    environment_facts: list[str] = Field(default_factory=list)
    information_boundary: list[str] = Field(
        default_factory=list, description="what the agent can and cannot see"
    )
    acceptance_criteria: list[str] = Field(default_factory=list)
    execution_requirements: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list, description="difficulty pattern ids applied")
