"""Reviewer settings (env prefix ``SKILLGYM_``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from skillgym_core.settings import CommonSettings


class ReviewerSettings(CommonSettings):
    feedback_budget: int = Field(3, ge=0, description="rejections fed back to the builder per task lineage")
    run_probes: bool = True
    reviewer_llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint for the blueprint review")
    reviewer_llm_model: str = "default"
    reviewer_llm_api_key: SecretStr = SecretStr("")
    reviewer_llm_timeout_s: float = 120.0
    venv_cache_dir: Path = Path("out/venv-cache")
    reviewer_env_build: bool = Field(True, description="build declared task environments (local sandbox only)")
    reviewer_env_cache: Path = Field(Path("out/env-cache"), description="cache of built task environments")
    reviewer_env_index_url: str | None = Field(None, description="package index for environment builds")
    reviewer_env_find_links: list[str] = Field(default_factory=list, description="extra wheel directories/URLs")
    reviewer_env_no_index: bool = Field(False, description="install only from reviewer_env_find_links")
    min_leak_chars: int = Field(16, ge=4, description="shortest expected-output string counted as a leak")
