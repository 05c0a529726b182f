"""The sampling plan: harness x model x prompt variant x skill condition x attempts, from YAML or settings.

```yaml
attempts: 3
skill_conditions: [with, without]
concurrency: 2
prompt_variants:            # extra variants of the built-in agent, by name
  strict: {system_prompt: "...{workdir}...{tool_name}...{skills_section}", tool_name: sh, argument_name: script}
configurations:
  - harness: builtin
    models: [teacher-a, teacher-b]
    prompt_variants: [default, strict]
  - harness: mini-swe-agent
    models: [teacher-a]
  - harness: oracle
```
Reference harnesses (oracle, nop) run once per task: no model, no variants, no repeated attempts."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillgym_sampler.errors import PlanError
from skillgym_sampler.harness.base import REFERENCE_HARNESSES, RunSpec
from skillgym_sampler.harness.prompts import PromptVariant
from skillgym_sampler.settings import SamplerSettings, SkillCondition

REFERENCE_MODEL = {"oracle": "reference-solution", "nop": "none"}
LLM_HARNESSES = frozenset({"builtin", "mini-swe-agent", "claude-code", "codex"})


class Configuration(BaseModel):
    model_config = ConfigDict(extra="forbid")
    harness: str
    models: list[str] = Field(default_factory=list)
    prompt_variants: list[str] = Field(default_factory=lambda: ["default"])
    skill_conditions: list[SkillCondition] | None = None
    attempts: int | None = Field(None, ge=1)
    base_url: str | None = None


class SamplingPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attempts: int = Field(1, ge=1)
    skill_conditions: list[SkillCondition] = Field(default_factory=lambda: list[SkillCondition](["with"]))
    concurrency: int | None = Field(None, ge=1)
    prompt_variants: dict[str, PromptVariant] = Field(default_factory=dict)
    configurations: list[Configuration]

    @classmethod
    def from_yaml(cls, path: Path) -> SamplingPlan:
        try:
            data = yaml.safe_load(Path(path).read_text())
            return cls.model_validate(data)
        except (OSError, yaml.YAMLError) as exc:
            raise PlanError(f"{path}: cannot read the sampling plan: {exc}", path=str(path)) from exc
        except ValidationError as exc:
            raise PlanError(
                f"{path}: does not match the sampling plan schema",
                path=str(path),
                errors=exc.errors(include_url=False, include_context=False),
            ) from exc

    @classmethod
    def from_settings(cls, settings: SamplerSettings) -> SamplingPlan:
        if settings.plan_path is not None:
            return cls.from_yaml(settings.plan_path)
        configurations = []
        for harness in settings.harnesses:
            if harness in LLM_HARNESSES and not settings.llm_base_url:
                continue
            models = [] if harness in REFERENCE_HARNESSES else [settings.llm_model]
            configurations.append(
                Configuration(harness=harness, models=models, prompt_variants=list(settings.prompt_variants))
            )
        return cls(
            attempts=settings.attempts,
            skill_conditions=list(settings.skill_conditions),
            concurrency=settings.concurrency,
            configurations=configurations,
        )

    def trials(
        self, *, task_id: str, skill_id: str, skill_name: str, category: str | None
    ) -> list[RunSpec]:
        specs: list[RunSpec] = []
        for config in self.configurations:
            if config.harness in REFERENCE_HARNESSES:
                specs.append(RunSpec(task_id=task_id, skill_id=skill_id, skill_name=skill_name, category=category,
                                     harness=config.harness, model=REFERENCE_MODEL[config.harness],
                                     skill_provided=config.harness == "oracle"))
                continue
            if not config.models:
                raise PlanError(f"configuration {config.harness!r} lists no models", harness=config.harness)
            conditions = config.skill_conditions or self.skill_conditions
            attempts = config.attempts or self.attempts
            for model in config.models:
                for variant in config.prompt_variants:
                    for condition in conditions:
                        for attempt in range(1, attempts + 1):
                            specs.append(RunSpec(
                                task_id=task_id, skill_id=skill_id, skill_name=skill_name, category=category,
                                harness=config.harness, model=model, prompt_variant=variant,
                                attempt=attempt, skill_provided=condition == "with",
                            ))
        return specs

    def base_url_for(self, harness: str, model: str) -> str | None:
        for config in self.configurations:
            if config.harness == harness and model in config.models and config.base_url:
                return config.base_url
        return None
