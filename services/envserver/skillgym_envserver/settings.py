"""Settings of the environment server (``SKILLGYM_ENVSERVER_*`` on top of the common ``SKILLGYM_*``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import SettingsConfigDict
from skillgym_core.rlenv.api import RewardMode
from skillgym_core.settings import CommonSettings


def _env(name: str, default: Any, **kwargs: Any) -> Any:
    return Field(default, validation_alias=AliasChoices(name, f"SKILLGYM_ENVSERVER_{name.upper()}"), **kwargs)


class EnvServerSettings(CommonSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLGYM_", extra="ignore", populate_by_name=True)

    host: str = _env("host", "127.0.0.1")
    port: int = _env("port", 8090, ge=0, le=65535)
    state_dir: Path = _env("state_dir", Path("out/envserver"),
                           description="episodes, their workspaces and unpacked tasks; kept across restarts")
    token: SecretStr = _env("token", SecretStr(""), description="bearer token clients must send (empty: none)")
    max_open_episodes: int = _env("max_open_episodes", 32, ge=1,
                                  description="open episodes at once; more get 429 with Retry-After")
    retry_after_s: float = _env("retry_after_s", 2.0, gt=0)
    episode_ttl_s: float = _env("episode_ttl_s", 900.0, gt=0, description="idle time before the janitor ends one")
    janitor_interval_s: float = _env("janitor_interval_s", 10.0, gt=0)
    max_steps: int = _env("max_steps", 50, ge=1, le=1000)
    step_timeout_s: float = _env("step_timeout_s", 120.0, gt=0)
    max_observation_chars: int = _env("max_observation_chars", 16_000, ge=256)
    max_read_bytes: int = _env("max_read_bytes", 64 * 1024, ge=1)
    max_write_bytes: int = _env("max_write_bytes", 4 * 1024 * 1024, ge=1)
    default_reward: RewardMode = _env("default_reward", "binary")
    format_penalty: float = _env("format_penalty", 0.1, ge=0, description="shaped reward: cost of a malformed call")
    format_penalty_cap: float = _env("format_penalty_cap", 0.5, ge=0)
    pass_threshold: float = _env("pass_threshold", 1.0, gt=0, le=1)
    curriculum_band: tuple[float, float] = _env("curriculum_band", (0.1, 0.9),
                                                description="pass rates the sampler prefers")
    curriculum_min_episodes: int = _env("curriculum_min_episodes", 4, ge=1,
                                        description="episodes before a task's pass rate counts")
    hardening_pass_rate: float = _env("hardening_pass_rate", 0.9, gt=0, le=1,
                                      description="ask for a harder revision once a task is solved this often")
    catalog_refresh_s: float = _env("catalog_refresh_s", 30.0, ge=0)
