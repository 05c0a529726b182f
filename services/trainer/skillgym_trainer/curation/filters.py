"""Which candidates are eligible at all."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field
from skillgym_core.provenance import Source

from skillgym_trainer.curation.records import Candidate


class Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed_only: bool = True
    validated_tasks_only: bool = Field(
        True, description="leave out runs of tasks never proven (no reference solution): their verifier may be lax")
    min_reward: float | None = Field(0.9, description="keep reward >= this (papers: r > 0.9)")
    harnesses: list[str] | None = None
    models: list[str] | None = None
    labels: list[str] | None = None
    categories: list[str] | None = None
    sources: list[Source] | None = Field(
        None, description="'reference' (played-back reference solutions) and/or 'model'; None keeps both"
    )

    def reject_reason(self, candidate: Candidate) -> str | None:
        if self.passed_only and not candidate.passed:
            return "not_passed"
        if self.validated_tasks_only and not candidate.task_validated:
            return "task_unvalidated"
        if self.min_reward is not None and candidate.reward < self.min_reward:
            return "low_reward"
        for name, allowed, value in (
            ("harness", self.harnesses, candidate.harness),
            ("model", self.models, candidate.model),
            ("label", self.labels, candidate.label),
            ("category", self.categories, candidate.category),
            ("source", self.sources, candidate.source),
        ):
            if allowed is not None and value not in allowed:
                return f"{name}_excluded"
        return None

    def apply(self, candidates: Iterable[Candidate]) -> tuple[list[Candidate], dict[str, int]]:
        kept: list[Candidate] = []
        rejected: dict[str, int] = {}
        for candidate in candidates:
            reason = self.reject_reason(candidate)
            if reason is None:
                kept.append(candidate)
            else:
                rejected[reason] = rejected.get(reason, 0) + 1
        return kept, rejected
