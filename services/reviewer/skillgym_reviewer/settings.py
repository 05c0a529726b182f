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
    min_leak_chars: int = Field(16, ge=4, description="shortest expected-output string counted as a leak")
