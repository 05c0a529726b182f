"""The sampler service end to end: real bubblewrap sandbox, real local store, a real scripted
OpenAI-compatible HTTP server, a real Harbor task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core import keys
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.contracts.events import HardeningRequested, TrajectoryVerified
from skillgym_core.store.base import get_json
from skillgym_sampler import SamplerService, SamplerSettings

from tests.sampler.tasks import EXPECTED_TOTAL, SKILL_NAME, publish_task
from tests.support.scripted_llm import ScriptedLLMServer, Sequence, bash

pytestmark = pytest.mark.integration

SOLVING_TURNS = [
    bash(f"cat /skills/{SKILL_NAME}/SKILL.md"),
    bash("awk -F, 'NR>1 {s+=$2} END {print s}' ledger.csv > total.txt && cat total.txt"),
]


def _by_harness(outputs: list[object]) -> dict[str, TrajectoryVerified]:
    return {o.harness: o for o in outputs if isinstance(o, TrajectoryVerified)}


def _stored(ctx: ServiceContext, event: TrajectoryVerified) -> tuple[Trajectory, VerificationRecord]:
    raw = ctx.store.get_bytes(event.atif_key)
    report = validate_trajectory(raw)
    assert report.valid, [str(i) for i in report.issues]
    assert report.warnings == [], [str(i) for i in report.warnings]
    return Trajectory.model_validate_json(raw), VerificationRecord.model_validate(
        get_json(ctx.store, event.verification_key)
    )


def test_oracle_nop_and_builtin_runs_are_verified_and_stored(ctx: ServiceContext, tmp_path: Path) -> None:
    with ScriptedLLMServer(Sequence(SOLVING_TURNS, final="Wrote the total (42) to total.txt.")) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="scripted-teacher",
                                   max_hardening_rounds=2)
        service = SamplerService(ctx, settings)
        event = publish_task(ctx, tmp_path)
        outputs = list(service.handle(event))
        requests_after_first = len(server.requests)

        runs = _by_harness(outputs)
        assert set(runs) == {"oracle", "nop", "builtin"}
        assert runs["oracle"].passed and runs["oracle"].reward == 1.0
        assert not runs["nop"].passed and runs["nop"].failure_type == "verifier_rejected"
        assert runs["builtin"].passed and runs["builtin"].model == "scripted-teacher"

        oracle, oracle_record = _stored(ctx, runs["oracle"])
        commands = [c.arguments["command"] for s in oracle.steps for c in s.tool_calls or []]
        # read the skill, look at the inputs, the solution's three commands, check what changed
        assert len(commands) == 6 and commands[0] == f"cat /skills/{SKILL_NAME}/SKILL.md"
        assert "Ledger total" in oracle.steps[1].observation.results[0].content
        assert "ledger.csv" in oracle.steps[2].observation.results[0].content
        assert "total.txt" in commands[3] and not any("/solution" in c for c in commands)
        assert oracle.steps[-2].observation.results[0].content.strip().endswith(EXPECTED_TOTAL)
        assert oracle.steps[-1].observation.results[0].content.strip().endswith("/app/total.txt")
        assert oracle_record.tool_calls == 6 and oracle_record.steps == 7
        assert oracle.extra == {"source": "reference"} and oracle_record.skill_read

        builtin, record = _stored(ctx, runs["builtin"])
        assert builtin.extra == {"source": "model"}
        sources = [s.source for s in builtin.steps]
        assert sources == ["system", "user", "agent", "agent", "agent"]
        assert "/skills" in builtin.steps[0].message and SKILL_NAME in builtin.steps[0].message
        skill_obs = builtin.steps[2].observation.results[0]
        assert skill_obs.source_call_id == builtin.steps[2].tool_calls[0].tool_call_id
        assert "Ledger total" in skill_obs.content
        assert builtin.steps[4].tool_calls is None and "42" in builtin.steps[4].message
        assert all(s.metrics and s.metrics.prompt_tokens > 0 for s in builtin.steps[2:])
        final = builtin.final_metrics
        assert final.total_steps == 5
        assert final.total_prompt_tokens == sum(s.metrics.prompt_tokens for s in builtin.steps[2:])
        assert record.skill_read and record.passed and record.tool_calls == 2
        assert record.tokens["prompt"] == final.total_prompt_tokens
        assert record.timings["agent_s"] > 0 and record.timings["verify_s"] > 0
        assert "total is correct" in record.verifier_stdout

        # the model saw the tool results of its own commands
        last_request = server.requests[-1]
        tool_messages = [m for m in last_request["messages"] if m["role"] == "tool"]
        assert len(tool_messages) == 2 and tool_messages[1]["content"].startswith("exit_code: 0\n42")

        hardening = [o for o in outputs if isinstance(o, HardeningRequested)]
        assert len(hardening) == 1 and hardening[0].round == 1 and hardening[0].pass_rate == 1.0
        assert hardening[0].trajectory_keys == [runs["builtin"].atif_key]

        # redelivery: same ids, nothing rerun
        again = list(service.handle(event))
        assert [o.model_dump() for o in again] == [o.model_dump() for o in outputs]
        assert len(server.requests) == requests_after_first


def test_withheld_skill_is_not_mounted_and_failure_is_recorded(ctx: ServiceContext, tmp_path: Path) -> None:
    with ScriptedLLMServer(Sequence(SOLVING_TURNS[:1], final="I could not find the skill.")) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, harnesses=["builtin"],
                                   skill_conditions=["with", "without"])
        outputs = list(SamplerService(ctx, settings).handle(publish_task(ctx, tmp_path)))
    runs = {o.skill_provided: o for o in outputs if isinstance(o, TrajectoryVerified)}
    assert set(runs) == {True, False}
    assert runs[True].trajectory_id != runs[False].trajectory_id
    assert not any(o.passed for o in runs.values())
    without, record = _stored(ctx, runs[False])
    assert "/skills" not in without.steps[0].message
    assert "No such file" in without.steps[2].observation.results[0].content
    assert not record.skill_read and record.failure_type == "verifier_rejected"
    assert not [o for o in outputs if isinstance(o, HardeningRequested)]
    system_prompts = {r["messages"][0]["content"] for r in server.requests}
    assert len(system_prompts) == 2


def test_limits_and_endpoint_failures_end_runs_with_a_typed_outcome(ctx: ServiceContext, tmp_path: Path) -> None:
    looping = Sequence([bash("true")] * 50)
    with ScriptedLLMServer(looping) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, harnesses=["builtin"], max_steps=3)
        outputs = list(SamplerService(ctx, settings).handle(publish_task(ctx, tmp_path)))
    trajectory, record = _stored(ctx, outputs[0])
    assert record.agent_outcome == "step_limit" and len(trajectory.steps) == 5
    assert "step_limit" in (trajectory.notes or "")

    with ScriptedLLMServer(looping, fail_first=100) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, harnesses=["builtin"], llm_max_retries=1,
                                   attempts=2)
        outputs = list(SamplerService(ctx, settings).handle(publish_task(ctx, tmp_path, task_id="task-ledger0002")))
    assert len(outputs) == 2
    trajectory, record = _stored(ctx, outputs[0])
    assert record.agent_outcome.startswith("llm_error") and len(trajectory.steps) == 2


def test_invalid_tasks_are_skipped_and_builtin_needs_an_endpoint(ctx: ServiceContext, tmp_path: Path) -> None:
    event = publish_task(ctx, tmp_path)
    invalid = event.model_copy(update={"payload": event.payload.model_copy(update={"valid": False})})
    service = SamplerService(ctx, SamplerSettings())
    assert service.handle(invalid) == []
    outputs = list(service.handle(event))
    assert sorted(o.harness for o in outputs) == ["nop", "oracle"]
    assert json.loads(ctx.store.get_bytes(keys.trajectory_atif(outputs[0].trajectory_id)))["schema_version"] == (
        "ATIF-v1.7"
    )
