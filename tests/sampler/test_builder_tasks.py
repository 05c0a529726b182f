"""The sampler on tasks the builder made from real skills (not hand-written fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_builder import BuilderService
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.contracts.events import EnvBuilt, Envelope, EnvValidated, TrajectoryVerified
from skillgym_core.store.base import get_json
from skillgym_sampler import SamplerService, SamplerSettings

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap
from tests.support.scripted_llm import ScriptedLLMServer, assistant, bash

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _explorer(skill: str):  # -> responder
    """Look around like an agent would: read the skill's SKILL.md when offered, inspect the workspace."""

    def respond(body: dict) -> dict:
        system = body["messages"][0]["content"]
        done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        first = f"cat /skills/{skill}/SKILL.md | head -40" if "/skills" in system else "ls -la"
        script = [first, "ls -la /app"]
        if done < len(script):
            return bash(script[done])
        if "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in str(body["messages"][1]["content"]):
            return assistant("Submitting.", [bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")["tool_calls"][0]])
        return assistant("I inspected the task; stopping here.")

    return respond


@pytest.mark.parametrize(("skill", "subcategory"), [("config-layers", "ci-cd"), ("config-hardening-review", "security-auditing")])
def test_every_harness_on_a_builder_task(tmp_path: Path, skill: str, subcategory: str) -> None:
    ctx = make_context(tmp_path)
    built = BuilderService(ctx).handle(wrap(put_skill(ctx.store, FIXTURES / skill, subcategory=subcategory)))[0]
    assert isinstance(built, EnvBuilt)
    event = Envelope.wrap(
        EnvValidated(task_id=built.task_id, skill_id=built.skill_id, package_key=built.package_key, valid=True),
        producer="validator", correlation_id="test",
    )
    with ScriptedLLMServer(_explorer(skill)) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="explorer",
                                   harnesses=["oracle", "nop", "builtin", "mini-swe-agent"],
                                   skill_conditions=["with", "without"], max_seconds=120)
        outputs = [o for o in SamplerService(ctx, settings).handle(event) if isinstance(o, TrajectoryVerified)]
    runs = {(o.harness, o.skill_provided): o for o in outputs}
    assert set(runs) == {("oracle", True), ("nop", False), ("builtin", True), ("builtin", False),
                         ("mini-swe-agent", True), ("mini-swe-agent", False)}
    assert runs[("oracle", True)].passed, "the reference solution must pass through the oracle harness"
    assert not runs[("nop", False)].passed
    for run in outputs:
        raw = ctx.store.get_bytes(run.atif_key)
        report = validate_trajectory(raw)
        assert report.valid and not report.warnings, (run.harness, [str(i) for i in report.issues])
        record = VerificationRecord.model_validate(get_json(ctx.store, run.verification_key))
        assert record.steps == len(Trajectory.model_validate_json(raw).steps)
    for harness in ("builtin", "mini-swe-agent"):
        read = VerificationRecord.model_validate(get_json(ctx.store, runs[(harness, True)].verification_key))
        assert read.skill_read, harness
        with_skill = Trajectory.model_validate_json(ctx.store.get_bytes(runs[(harness, True)].atif_key))
        outputs_seen = [str(r.content) for s in with_skill.steps for r in (s.observation.results if s.observation else [])]
        assert any(f"name: {skill}" in text for text in outputs_seen), harness
        without = VerificationRecord.model_validate(get_json(ctx.store, runs[(harness, False)].verification_key))
        assert not without.skill_read
