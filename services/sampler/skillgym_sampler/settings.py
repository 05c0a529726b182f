"""Settings of the sampler service (``SKILLGYM_SAMPLER_*`` on top of the common ``SKILLGYM_*``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import SettingsConfigDict
from skillgym_core.llm import LLMSettings, ToolCallFormat
from skillgym_core.settings import CommonSettings

SkillCondition = Literal["with", "without"]


def _sampler(name: str, default: Any, **kwargs: Any) -> Any:
    return Field(default, validation_alias=AliasChoices(name, f"SKILLGYM_SAMPLER_{name.upper()}"), **kwargs)


class SamplerSettings(CommonSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLGYM_", extra="ignore", populate_by_name=True)

    harnesses: list[str] = _sampler(
        "harnesses",
        ["oracle", "nop", "builtin"],
        description="harnesses run on every task; 'builtin' is skipped while no LLM base URL is set",
    )
    skill_conditions: list[SkillCondition] = _sampler("skill_conditions", ["with"])
    attempts: int = _sampler("attempts", 1, ge=1)
    prompt_variants: list[str] = _sampler("prompt_variants", ["default"])
    plan_path: Path | None = _sampler(
        "plan_path", None, description="YAML sampling plan; replaces harnesses/conditions/attempts when set"
    )

    llm_base_url: str = _sampler("llm_base_url", "", description="OpenAI-compatible endpoint of the teacher")
    llm_model: str = _sampler("llm_model", "default")
    llm_api_key: SecretStr = _sampler("llm_api_key", SecretStr(""))
    llm_timeout_s: float = _sampler("llm_timeout_s", 120.0, gt=0)
    llm_max_retries: int = _sampler("llm_max_retries", 3, ge=1)
    llm_temperature: float = _sampler("llm_temperature", 0.0, ge=0)
    llm_max_tokens: int | None = _sampler("llm_max_tokens", None)
    llm_tool_call_format: ToolCallFormat = _sampler(
        "llm_tool_call_format", "auto", description="where the built-in agent's tool calls are read: native "
        "tool_calls, or text in one format (hermes, llama3, mistral, json; auto = native, else detected)",
    )
    llm_capture_tokens: bool = _sampler(
        "llm_capture_tokens", False, description="record each model turn's prompt and completion token ids and "
        "log-probabilities in the trajectory (the step's metrics), as the endpoint returns them (serve-model, vLLM, "
        "llama.cpp's server)",
    )

    max_steps: int = _sampler("max_steps", 40, ge=1, description="model turns per run")
    max_seconds: float = _sampler("max_seconds", 900.0, gt=0, description="wall time per run")
    max_total_tokens: int = _sampler("max_total_tokens", 400_000, ge=1, description="prompt+completion per run")
    command_timeout_s: float = _sampler("command_timeout_s", 120.0, gt=0)
    observation_max_chars: int = _sampler("observation_max_chars", 10_000, ge=100)
    concurrency: int = _sampler("concurrency", 2, ge=1)
    pass_threshold: float = _sampler("pass_threshold", 1.0, ge=0, le=1)

    hardening_threshold: float = _sampler("hardening_threshold", 0.7, ge=0, le=1)
    max_hardening_rounds: int = _sampler("max_hardening_rounds", 2, ge=0)
    sample_unvalidated: bool = _sampler(
        "sample_unvalidated", True,
        description="also sample tasks that could not be proven only for lack of a reference solution (Harbor "
                    "tasks may ship none); their runs are marked task_validated=false and left out of datasets")
    reference_workdir: str = _sampler(
        "reference_workdir",
        "/tmp/work",
        pattern=r"^/tmp/[A-Za-z0-9._/-]+$",
        description="where the oracle's demonstration writes its scripts; kept between its commands",
    )

    miniswe_step_limit: int = _sampler("miniswe_step_limit", 40, ge=1)
    claude_command: str = _sampler("claude_command", "claude")
    codex_command: str = _sampler("codex_command", "codex")

    def llm_settings(self, model: str | None = None, base_url: str | None = None) -> LLMSettings:
        return LLMSettings(
            base_url=base_url or self.llm_base_url,
            model=model or self.llm_model,
            api_key=self.llm_api_key,
            timeout_s=self.llm_timeout_s,
            max_retries=self.llm_max_retries,
            temperature=self.llm_temperature,
            max_tokens=self.llm_max_tokens,
            tool_call_format=self.llm_tool_call_format,
            capture_tokens=self.llm_capture_tokens,
        )
