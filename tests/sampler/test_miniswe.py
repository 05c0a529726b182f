"""mini-swe-agent really runs inside the bubblewrap sandbox against the scripted endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.contracts.events import TrajectoryVerified
from skillgym_core.store.base import get_json
from skillgym_sampler import SamplerService, SamplerSettings

from tests.sampler.tasks import SKILL_NAME, publish_task
from tests.support.scripted_llm import Rules, ScriptedLLMServer, assistant, bash

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def _turn(body: dict) -> dict:
    """Solve with the skill when the prompt lists it; without it, guess and submit."""
    messages = body["messages"]
    done = sum(1 for m in messages if m.get("role") == "assistant")
    has_skill = "/skills" in messages[0]["content"]
    script = (
        [bash(f"cat /skills/{SKILL_NAME}/SKILL.md"),
         bash("awk -F, 'NR>1 {s+=$2} END {print s}' ledger.csv > total.txt && cat total.txt")]
        if has_skill else [bash("echo 40 > total.txt")]
    )
    if done < len(script):
        return script[done]
    return assistant("Done, submitting.", [bash(SUBMIT)["tool_calls"][0]])


def test_mini_swe_agent_runs_in_the_sandbox_with_and_without_the_skill(
    ctx: ServiceContext, tmp_path: Path
) -> None:
    with ScriptedLLMServer(Rules([], default=_turn)) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="scripted-teacher",
                                   harnesses=["mini-swe-agent"], skill_conditions=["with", "without"],
                                   max_seconds=120)
        outputs = [o for o in SamplerService(ctx, settings).handle(publish_task(ctx, tmp_path))
                   if isinstance(o, TrajectoryVerified)]
        assert server.requests, "mini-swe-agent never reached the endpoint"
        assert server.requests[0]["model"] == "scripted-teacher"
        assert server.requests[0]["tools"][0]["function"]["name"] == "bash"
    runs = {o.skill_provided: o for o in outputs}
    assert runs[True].passed and not runs[False].passed
    for event in outputs:
        raw = ctx.store.get_bytes(event.atif_key)
        report = validate_trajectory(raw)
        assert report.valid and not report.warnings, [str(i) for i in report.issues]
    with_skill = Trajectory.model_validate_json(ctx.store.get_bytes(runs[True].atif_key))
    record = VerificationRecord.model_validate(get_json(ctx.store, runs[True].verification_key))
    assert with_skill.agent.name == "mini-swe-agent" and with_skill.agent.version.startswith("2.")
    assert [s.source for s in with_skill.steps] == ["system", "user", "agent", "agent", "agent"]
    assert "/skills" in with_skill.steps[0].message
    read = with_skill.steps[2]
    assert read.observation.results[0].source_call_id == read.tool_calls[0].tool_call_id
    assert "Ledger total" in read.observation.results[0].content
    assert "42" in with_skill.steps[3].observation.results[0].content
    assert with_skill.steps[4].tool_calls[0].arguments["command"] == SUBMIT
    assert all(s.metrics and s.metrics.prompt_tokens > 0 for s in with_skill.steps[2:])
    assert with_skill.final_metrics.extra["exit_status"] == "Submitted"
    assert record.skill_read and record.agent_outcome == "ok" and record.tool_calls == 3
