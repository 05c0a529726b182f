"""Sampling plans from YAML: the trial matrix, per-configuration overrides, typed errors, resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from skillgym_core import keys
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import TrajectoryVerified
from skillgym_sampler import SamplerService, SamplerSettings
from skillgym_sampler.errors import PlanError
from skillgym_sampler.plan import SamplingPlan

from tests.sampler.tasks import SKILL_NAME, publish_task
from tests.support.scripted_llm import ScriptedLLMServer, Sequence, bash

PLAN = """
attempts: 2
skill_conditions: [with, without]
concurrency: 2
prompt_variants:
  strict:
    system_prompt: "Work in {workdir} with the {tool_name} tool only. {skills_section}"
    tool_name: sh
    argument_name: script
configurations:
  - harness: builtin
    models: [teacher-a, teacher-b]
    prompt_variants: [default, strict]
  - harness: builtin
    models: [teacher-c]
    skill_conditions: [with]
    attempts: 1
  - harness: oracle
"""


def _plan(tmp_path: Path, text: str = PLAN) -> SamplingPlan:
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return SamplingPlan.from_yaml(path)


def test_trial_matrix(tmp_path: Path) -> None:
    specs = _plan(tmp_path).trials(task_id="t", skill_id="s", skill_name="k", category=None)
    assert len(specs) == 2 * 2 * 2 * 2 + 1 + 1
    assert len({spec.trajectory_id for spec in specs}) == len(specs)
    oracle = [s for s in specs if s.harness == "oracle"]
    assert len(oracle) == 1 and oracle[0].model == "reference-solution"
    teacher_c = [s for s in specs if s.model == "teacher-c"]
    assert [(s.skill_provided, s.attempt) for s in teacher_c] == [(True, 1)]


@pytest.mark.parametrize(
    "text",
    ["configurations: [{harness: builtin}]", "attempts: 0\nconfigurations: []", "configurations: [{harnes: x}]", ":"],
)
def test_bad_plans_raise_plan_errors(tmp_path: Path, text: str) -> None:
    with pytest.raises(PlanError) as info:
        _plan(tmp_path, text).trials(task_id="t", skill_id="s", skill_name="k", category=None)
    assert info.value.reason == "plan"


@pytest.mark.integration
def test_plan_variants_resume_and_metrics(ctx: ServiceContext, tmp_path: Path) -> None:
    plan = _plan(tmp_path, """
configurations:
  - harness: builtin
    models: [teacher-a]
    prompt_variants: [default, strict]
  - harness: claude-code
    models: [teacher-a]
prompt_variants:
  strict: {system_prompt: "Use {tool_name}. {skills_section}", tool_name: sh, argument_name: script}
""")
    turns = Sequence([bash(f"cat /skills/{SKILL_NAME}/SKILL.md")], final="done")
    labels = {"harness": "builtin", "model": "teacher-a"}
    started = REGISTRY.get_sample_value("skillgym_runs_started_total", labels) or 0
    with ScriptedLLMServer(turns) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, claude_command="claude-not-installed-here")
        service = SamplerService(ctx, settings, plan=plan)
        event = publish_task(ctx, tmp_path)
        first = {(o.harness, o.prompt_variant): o
                 for o in service.handle(event) if isinstance(o, TrajectoryVerified)}
        assert set(first) == {("builtin", "default"), ("builtin", "strict"), ("claude-code", "default")}
        tools = {r["tools"][0]["function"]["name"] for r in server.requests}
        assert tools == {"bash", "sh"}
        strict = next(r for r in server.requests if r["tools"][0]["function"]["name"] == "sh")
        assert strict["tools"][0]["function"]["parameters"]["required"] == ["script"]
        # the strict variant's call used the wrong tool name: the agent saw a typed error
        strict_last = [r for r in server.requests if r["tools"][0]["function"]["name"] == "sh"][-1]
        strict_tool_reply = [m for m in strict_last["messages"] if m["role"] == "tool"]
        assert strict_tool_reply and "unknown tool 'bash'" in strict_tool_reply[0]["content"]

        missing_cli = first[("claude-code", "default")]
        record = ctx.store.get_bytes(missing_cli.verification_key).decode()
        assert '"agent_outcome": "harness_error: not_installed' in record and not missing_cli.passed

        # resume: forget one scored trial; only that one runs again
        calls_before = len(server.requests)
        ctx.store.delete(keys.trajectory_verification(first[("builtin", "strict")].trajectory_id))
        again = [o for o in service.handle(event) if isinstance(o, TrajectoryVerified)]
        assert len(server.requests) == calls_before + 2
        assert sorted(o.trajectory_id for o in again) == sorted(o.trajectory_id for o in first.values())
    assert REGISTRY.get_sample_value("skillgym_runs_started_total", labels) == started + 3
    assert REGISTRY.get_sample_value(
        "skillgym_runs_finished_total",
        {"harness": "claude-code", "model": "teacher-a", "category": "data-processing", "passed": "false"},
    ) >= 1
