"""Reviewer settings (env prefix ``SKILLGYM_``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from skillgym_core.settings import CommonSettings


class ReviewerSettings(CommonSettings):
    feedback_budget: int = Field(3, ge=0, description="rejections fed back to the builder per task lineage")
    run_probes: bool = True
    stability_reruns: int = Field(
        2, ge=0, description="extra verifier runs on the reference result, each with another hash seed; any other "
                             "reward marks the verifier flaky"
    )
    reviewer_llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint for the blueprint review")
    reviewer_llm_model: str = "default"
    reviewer_llm_api_key: SecretStr = SecretStr("")
    reviewer_llm_timeout_s: float = 120.0
    venv_cache_dir: Path = Path("out/venv-cache")
    min_leak_chars: int = Field(16, ge=4, description="shortest expected-output string counted as a leak")
    mutation_probes: bool = Field(True, description="judge wrong-but-plausible results the verifier must reject")
    mutation_max_mutants: int = Field(40, ge=1, description="mutated outputs per task, spread over files and operators")
    mutation_min_score: float = Field(0.9, ge=0, le=1, description="share of wrong results the verifier must reject")
    mutation_every_item: bool = Field(True, description="every programmatic rubric item must reject a wrong result")
    mutation_near_misses: bool = Field(
        True, description="a near miss (a truncated number, a short id, a zero record) accepted where a plainly "
                          "wrong value at the same place is rejected makes the verifier too lax"
    )
    mutation_seed: int = Field(0, description="seed of the mutant draws (same seed, same mutants)")
    probe_workers: int = Field(0, ge=0, description="probe runs at once (0: two per core, 2 to 8)")
    bulk_judging: bool = Field(True, description="judge mutated outputs and data probes many to a verifier run where "
                                                 "the task's verifier is the built-in runner (same verdicts, less start-up)")
    mutation_skip_steps: bool = Field(True, description="try the reference solution with each step skipped")
    mutation_stale_inputs: int = Field(2, ge=0, description="input files changed under the reference outputs")
    mutation_llm_solutions: int = Field(3, ge=0, description="wrong solutions asked of the reviewer model, if set")
