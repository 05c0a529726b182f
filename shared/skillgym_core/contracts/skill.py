"""The skill record: what ingestion learned about one skill folder."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SKILL_RECORD_VERSION: Literal["1.0"] = "1.0"


class Evidence(BaseModel):
    """Where a judgement came from: a file and line, or the rule that fired."""

    model_config = ConfigDict(extra="forbid")
    rule: str
    file: str | None = None
    line: int | None = None
    excerpt: str | None = None


class Annotation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Any
    evidence: list[Evidence] = Field(default_factory=list)


class Diagnostic(BaseModel):
    """A spec violation or a lenient parse; never fatal on its own."""

    model_config = ConfigDict(extra="forbid")
    code: str
    message: str
    severity: Literal["error", "warning", "info"] = "warning"
    file: str | None = None
    line: int | None = None


class SkillFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    size: int
    sha256: str


class SkillRecord(BaseModel):
    """One skill folder, accepted or not, with every reason."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal["1.0"] = SKILL_RECORD_VERSION
    skill_id: str
    name: str
    description: str = ""
    source: str
    content_hash: str
    front_matter: dict[str, Any] = Field(default_factory=dict)
    body: str = ""
    files: list[SkillFile] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    basic: dict[str, Annotation] = Field(default_factory=dict)
    runtime: dict[str, Annotation] = Field(default_factory=dict)
    quality: dict[str, Annotation] = Field(default_factory=dict)
    safety: list[Evidence] = Field(default_factory=list)
    category: str | None = None
    subcategory: str | None = None
    category_confidence: float | None = None
    category_evidence: list[Evidence] = Field(default_factory=list)
    duplicate_of: str | None = None
    duplicate_cluster: str | None = None
    duplicate_kind: Literal["exact", "near"] | None = None
    duplicate_similarity: float | None = None
    normalized_hash: str | None = None
    accepted: bool = False
    reasons: list[str] = Field(default_factory=list)
