"""Builder settings (env prefix ``SKILLGYM_``)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from skillgym_core.settings import CommonSettings


class BuilderSettings(CommonSettings):
    builder_llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint; unset = templates only")
    builder_llm_model: str = "default"
    builder_llm_api_key: SecretStr = SecretStr("")
    builder_llm_timeout_s: float = 300.0
    builder_llm_max_turns: int = Field(40, ge=1)
    preferred_templates: list[str] = Field(default_factory=list)
    max_hardening_rounds: int = Field(2, ge=0)
    patterns_per_task: int = Field(1, ge=0, description="difficulty patterns applied to a first build")
