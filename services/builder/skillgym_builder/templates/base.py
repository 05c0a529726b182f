"""What a task template is: a data spec (blueprint defaults, assets, layout, runtime, checker,
limits) plus a small generator that turns a skill card into task files."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field
from skillgym_core.builtin_verifier import runner_text
from skillgym_core.contracts.task import Profile

from skillgym_builder.blueprint import Blueprint
from skillgym_builder.skillcard import SkillCard

if TYPE_CHECKING:
    from skillgym_builder.families.render import RenderJob


class RubricItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    weight: float = Field(gt=0, le=1)
    kind: str = "programmatic"  # or "llm": scored 0..1 by a judge
    description: str = ""


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agent_timeout_sec: float = 600
    verifier_timeout_sec: float = 120
    build_timeout_sec: float = 600
    cpus: int = 1
    memory_mb: int = 2048
    storage_mb: int = 4096


class TemplateSpec(BaseModel):
    """``data/templates/<id>/template.json``."""

    model_config = ConfigDict(extra="forbid")
    id: str
    profile: Profile
    title: str
    description: str
    subcategories: list[str] = Field(default_factory=list, description="taxonomy subcategories; [] = any")
    capability_demands: list[str] = Field(default_factory=list)
    blueprint: Blueprint
    input_assets: list[str] = Field(default_factory=list)
    file_layout: dict[str, str] = Field(default_factory=dict)
    runtime: dict[str, Any] = Field(default_factory=dict)
    checker: dict[str, Any] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=Limits)
    rubric: list[RubricItem] = Field(default_factory=list)
    difficulty: str = "medium"


@dataclass
class TemplateOutput:
    """Everything a generator decides; the package writer turns it into a Harbor directory."""

    instruction: str
    workspace: dict[str, bytes]
    protected: list[str]
    tests: dict[str, bytes]
    solution_steps: list[str]
    solution_files: dict[str, bytes] = field(default_factory=dict)
    alternatives: dict[str, list[str]] = field(default_factory=dict)
    blueprint: Blueprint | None = None
    params: dict[str, Any] = field(default_factory=dict)
    solve_script: str | None = None  # a complete solve.sh, used instead of ``solution_steps``
    alternative_scripts: dict[str, str] = field(default_factory=dict)  # complete solution/alternatives/*.sh
    requirements: list[str] = field(default_factory=list)  # environment/requirements.txt, one per line
    system_packages: list[str] = field(default_factory=list)  # Debian packages beyond runtime.apt_packages
    equivalences: dict[str, list[str]] = field(default_factory=dict)  # tests/equivalences.json
    metadata: dict[str, Any] = field(default_factory=dict)  # extra [metadata] keys (family, knobs, claims)
    render_jobs: list[RenderJob] = field(default_factory=list)  # workspace files a real library must make


class Template(Protocol):
    spec: TemplateSpec
    supported_knobs: tuple[str, ...]

    def unsuitable_reason(self, card: SkillCard) -> str | None:
        """Why the skill cannot support this template, or None when it can."""
        ...

    def generate(self, card: SkillCard, rng: random.Random, blueprint: Blueprint) -> TemplateOutput: ...


def data_text(*parts: str) -> str:
    return resources.files("skillgym_builder").joinpath("data", *parts).read_text(encoding="utf-8")


def load_spec(template_id: str) -> TemplateSpec:
    return TemplateSpec.model_validate(json.loads(data_text("templates", template_id, "template.json")))


def verifier_files(template_id: str, expected: dict[str, Any], rubric: list[RubricItem]) -> dict[str, bytes]:
    """The trusted verifier: the shared runner, the template's checks and its hidden expectations."""
    rubric_data = [item.model_dump() for item in rubric]
    return {
        "test.sh": runner_text("test.sh").encode(),
        "checks.py": runner_text("checks.py").encode(),
        "verify.py": data_text("templates", template_id, "verify.py").encode(),
        "expected.json": json.dumps(expected, indent=2, sort_keys=True).encode(),
        "rubric.json": json.dumps(rubric_data, indent=2).encode(),
    }
