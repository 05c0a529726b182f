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


def with_patterns(base: Blueprint, patterns: list[tuple[str, str]]) -> Blueprint:
    """``base`` with difficulty patterns (id, description) applied to its challenge."""
    if not patterns:
        return base.model_copy(deep=True)
    extra = " ".join(f"{description}" for _, description in patterns)
    return base.model_copy(
        update={
            "challenge": f"{base.challenge} Added difficulty: {extra}",
            "patterns": [*base.patterns, *(pid for pid, _ in patterns if pid not in base.patterns)],
        },
        deep=True,
    )
