"""Per-role LLM settings from the environment: ``SKILLGYM_<ROLE>_LLM_BASE_URL``, ``_MODEL``,
``_API_KEY``, ``_TIMEOUT_S``, ``_MAX_RETRIES``, ``_MAX_TOKENS``, ``_TEMPERATURE``,
``_COST_PER_1K_PROMPT``, ``_COST_PER_1K_COMPLETION``, ``_TOOL_CALL_FORMAT`` (``native``, ``auto``,
``hermes``, ``llama3``, ``mistral``, ``json``). A role without a base URL has no LLM."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from skillgym_core.llm.client import LLMSettings
from skillgym_core.llm.text_tools import ToolCallFormat

ROLES = ("builder", "reviewer", "judge", "baseline", "teacher")


class _RoleEnv(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore")
    base_url: str | None = None
    model: str = "default"
    api_key: SecretStr = SecretStr("")
    timeout_s: float = 120.0
    max_retries: int = 3
    max_tokens: int | None = None
    temperature: float = 0.0
    cost_per_1k_prompt: float = 0.0
    cost_per_1k_completion: float = 0.0
    tool_call_format: ToolCallFormat = "auto"


def role_settings(role: str, environ: Mapping[str, str] | None = None) -> LLMSettings | None:
    """The role's settings, or None when ``SKILLGYM_<ROLE>_LLM_BASE_URL`` is unset."""
    prefix = f"SKILLGYM_{role.upper()}_LLM_"
    if environ is None:
        env = _RoleEnv(_env_prefix=prefix)
    else:
        values = {k[len(prefix):].lower(): v for k, v in environ.items() if k.upper().startswith(prefix)}
        env = _RoleEnv.model_validate(values)
    if not env.base_url:
        return None
    return LLMSettings(**env.model_dump(exclude={"base_url"}), base_url=env.base_url)
