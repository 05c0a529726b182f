"""Settings of the validator service (``SKILLGYM_VALIDATOR_*`` on top of the common ``SKILLGYM_*``)."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import SettingsConfigDict
from skillgym_core.settings import CommonSettings

from skillgym_validator.gate import DEFAULT_NOP_RUNS, DEFAULT_ORACLE_RUNS


def _validator(name: str, default: Any, **kwargs: Any) -> Any:
    return Field(
        default,
        validation_alias=AliasChoices(name, f"SKILLGYM_VALIDATOR_{name.upper()}"),
        **kwargs,
    )


class ValidatorSettings(CommonSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLGYM_", extra="ignore", populate_by_name=True)

    nop_runs: int = _validator(
        "nop_runs",
        DEFAULT_NOP_RUNS,
        ge=1,
        description="verifier runs on the untouched workspace; all must fail with the same reward",
    )
    oracle_runs: int = _validator(
        "oracle_runs",
        DEFAULT_ORACLE_RUNS,
        ge=1,
        description="reference-solution runs; all must pass with the same reward",
    )
    pass_threshold: float = _validator("pass_threshold", 1.0, description="reward counted as a pass")
    log_tail_chars: int = _validator("log_tail_chars", 4000, ge=0, description="stdout/stderr kept per run")

    baseline_base_url: str | None = _validator(
        "baseline_base_url", None, description="OpenAI-compatible endpoint of the baseline agent; unset = no contrast"
    )
    baseline_model: str = _validator("baseline_model", "baseline")
    baseline_api_key: SecretStr = _validator("baseline_api_key", SecretStr(""))
    baseline_runs: int = _validator("baseline_runs", 1, ge=1, description="k runs with and k without the skill")
    baseline_max_steps: int = _validator("baseline_max_steps", 20, ge=1)
    baseline_step_timeout_s: float = _validator("baseline_step_timeout_s", 120.0, gt=0)
    baseline_request_timeout_s: float = _validator("baseline_request_timeout_s", 120.0, gt=0)
    baseline_max_retries: int = _validator(
        "baseline_max_retries", 3, ge=1, description="attempts per request on timeouts, 408/409/425/429 and 5xx"
    )
    baseline_backoff_s: float = _validator(
        "baseline_backoff_s", 0.5, ge=0, description="wait before the second attempt, doubled before each next one"
    )
    baseline_temperature: float = _validator("baseline_temperature", 0.0, ge=0)
    baseline_keep_transcripts: bool = _validator(
        "baseline_keep_transcripts", True, description="store each baseline run's messages in the report"
    )
    skill_dep_min_with: float = _validator(
        "skill_dep_min_with", 1.0, ge=0, le=1, description="Skill-Dep needs pass rate with the skill >= this"
    )
    skill_dep_max_without: float = _validator(
        "skill_dep_max_without", 0.0, ge=0, le=1, description="... and pass rate without it <= this"
    )
