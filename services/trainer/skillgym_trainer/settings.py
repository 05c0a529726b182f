"""Settings of the trainer service (``SKILLGYM_TRAINER_*`` on top of the common ``SKILLGYM_*``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict
from skillgym_core.settings import CommonSettings


def _trainer(name: str, default: Any, **kwargs: Any) -> Any:
    return Field(
        default,
        validation_alias=AliasChoices(name, f"SKILLGYM_TRAINER_{name.upper()}"),
        **kwargs,
    )


class TrainerSettings(CommonSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLGYM_", extra="ignore", populate_by_name=True)

    min_new_examples: int = _trainer(
        "min_new_examples", 0, ge=0, description="train once this many new passed trajectories arrived; 0 = never"
    )
    min_reward: float = _trainer("min_reward", 0.9, description="keep runs with reward >= this (and passed)")
    include_reference: bool = _trainer(
        "include_reference",
        True,
        description="train on reference demonstrations (solutions played back as agent steps) besides model runs",
    )
    launcher: Literal["inprocess", "kubernetes"] = _trainer("launcher", "inprocess")
    base_model: str = _trainer(
        "base_model", "tiny", description="'tiny' (random Llama + tokenizer trained on the data) or a model dir"
    )
    gguf_file: str | None = _trainer("gguf_file", None)
    max_steps: int = _trainer("max_steps", 8, ge=1)
    learning_rate: float = _trainer("learning_rate", 3e-3, gt=0)
    seq_len: int = _trainer("seq_len", 1024, ge=16, description="tokens per packed row")
    rows_per_step: int = _trainer("rows_per_step", 1, ge=1)
    max_example_tokens: int = _trainer("max_example_tokens", 4096, ge=16)
    seed: int = _trainer("seed", 0)
    checkpoint_every: int = _trainer(
        "checkpoint_every",
        50,
        ge=0,
        description="mirror a resumable checkpoint to the store every N steps (a restarted run resumes there); 0 = off",
    )
    k8s_namespace: str = _trainer("k8s_namespace", "skillgym")
    k8s_image: str | None = _trainer("k8s_image", None, description="image override for TrainingJobs")
    k8s_gpus: int = _trainer("k8s_gpus", 1, ge=0)
    zero_stage: int = _trainer("zero_stage", 3, ge=2, le=3)
