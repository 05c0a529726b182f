"""The review report: every gate's verdict, stored at ``keys.task_review(task_id)``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FailureType = Literal[
    "environment_error",
    "checker_error",
    "difficulty_mismatch",
    "weak_skill_dependence",
    "leakage",
    "too_lax",
    "too_strict",
]

MUTATION_GATE = "mutation"
MUTATION_SUMMARY = ("score", "tried", "killed", "survivors", "equivalent", "items", "unkilled_items", "by_kind", "seconds")
FAILURE_TYPES: tuple[str, ...] = FailureType.__args__  # type: ignore[attr-defined]


class GateResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gate: str
    passed: bool
    failure_type: FailureType | None = None
    reasons: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    seconds: float | None = None

    @classmethod
    def ok(cls, gate: str, **details: Any) -> GateResult:
        return cls(gate=gate, passed=True, details=details)

    @classmethod
    def fail(cls, gate: str, failure_type: FailureType, reasons: list[str], **details: Any) -> GateResult:
        return cls(gate=gate, passed=False, failure_type=failure_type, reasons=reasons, details=details)


class ReviewReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: Literal["1.0"] = "1.0"
    task_id: str
    skill_id: str
    revision: int
    parent_task_id: str | None = None
    builder: str = "template"
    template: str = ""
    approved: bool
    failure_type: FailureType | None = None
    reasons: list[str] = Field(default_factory=list)
    gates: list[GateResult] = Field(default_factory=list)
    feedback_round: int = 0
    feedback_sent: bool = False
    dropped: bool = False
    mutation: dict[str, Any] | None = None  # the mutation gate's score, per-item kills and survivors
    seconds: float | None = None

    @property
    def passed(self) -> bool:
        return self.approved

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @classmethod
    def from_gates(cls, gates: list[GateResult], **fields: Any) -> ReviewReport:
        failed = [gate for gate in gates if not gate.passed]
        mutation = next((gate for gate in gates if gate.gate == MUTATION_GATE), None)
        return cls(
            approved=not failed,
            failure_type=failed[0].failure_type if failed else None,
            reasons=[f"{gate.gate}: {reason}" for gate in failed for reason in gate.reasons],
            gates=gates,
            mutation={k: v for k, v in mutation.details.items() if k in MUTATION_SUMMARY} if mutation else None,
            **fields,
        )
