"""Sampling a multi-step Harbor task: the built-in agent gets one step's instruction at a time on
the same workspace, every step is graded before the next, and the trial is stored as one ATIF
trajectory marked by step with the steps' verdicts in its record; the reference harnesses play
each step's own solution back (oracle) or nothing (nop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.contracts.events import Envelope, EnvValidated, TrajectoryVerified
from skillgym_core.contracts.task import TaskDir
from skillgym_core.store.base import get_json
from skillgym_sampler import SamplerService, SamplerSettings

from tests.support.harbor_tasks import log_steps
from tests.support.scripted_llm import Rules, ScriptedLLMServer, assistant, bash, last_user_text

pytestmark = pytest.mark.integration


def _turn(body: dict[str, Any]) -> dict[str, Any]:
    done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if done:
        return assistant("Done.")
    if "How many ERROR" in user:
        return bash("grep -c '^ERROR' events.log > errors.txt && pwd")
    return bash("python3 -c 'import collections, json; json.dump(collections.Counter(l.split()[0] for l in "
                "open(\"events.log\")), open(\"summary.json\", \"w\"))'")


def test_each_step_is_sampled_graded_and_joined(ctx: ServiceContext, tmp_path: Path) -> None:
    task = TaskDir(log_steps(tmp_path / "log-steps"))
    task_id = task.config().metadata.task_id
    event = Envelope.wrap(EnvValidated(task_id=task_id, skill_id="none", package_key=ctx.save_task(task_id, task),
                                       valid=True, label="verifier-passed"), producer="test", correlation_id="c")
    with ScriptedLLMServer(Rules([], default=_turn)) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="scripted-teacher",
                                   harnesses=["oracle", "nop", "builtin"], skill_conditions=["without"])
        outputs = [o for o in SamplerService(ctx, settings).handle(event) if isinstance(o, TrajectoryVerified)]
        first_requests = [last_user_text(r) for r in server.requests if len(r["messages"]) == 2]
    runs = {o.harness: o for o in outputs}
    assert runs["oracle"].passed and runs["builtin"].passed and runs["builtin"].reward == 1.0
    assert not runs["nop"].passed and runs["nop"].failure_type == "step_below_min_reward"
    # the agent saw one step's instruction at a time, never the next one's
    assert len(first_requests) == 2 and "grown" not in first_requests[0] and "grown" in first_requests[1]

    raw = ctx.store.get_bytes(runs["builtin"].atif_key)
    assert validate_trajectory(raw).valid
    trajectory = Trajectory.model_validate_json(raw)
    marks = (trajectory.extra or {})["task_steps"]
    assert [m["name"] for m in marks] == ["count", "summarize"]
    assert trajectory.steps[marks[1]["first_step_id"] - 1].extra["task_step"] == "summarize"
    assert "/workspace" in trajectory.steps[2].observation.results[0].content
    record = VerificationRecord.model_validate(get_json(ctx.store, runs["builtin"].verification_key))
    assert [(s["name"], s["passed"]) for s in record.task_steps or []] == [("count", True), ("summarize", True)]
    # the verifier's time is its two runs, not what is left of the trial after the steps
    assert record.timings["verify_s"] >= sum(s["verify_seconds"] for s in record.task_steps or []) * 0.99 > 0
    nop = VerificationRecord.model_validate(get_json(ctx.store, runs["nop"].verification_key))
    assert [s["name"] for s in nop.task_steps or []] == ["count"] and nop.task_steps[0]["below_min_reward"]


def test_a_task_without_a_solution_is_sampled_and_its_runs_marked_unproven(ctx: ServiceContext, tmp_path: Path) -> None:
    from tests.support.harbor_tasks import hello_world

    task = TaskDir(hello_world(tmp_path / "no-solution", with_solution=False))
    task_id = task.config().metadata.task_id
    event = Envelope.wrap(EnvValidated(task_id=task_id, skill_id="none", package_key=ctx.save_task(task_id, task),
                                       valid=False, reasons=["no_solution"]), producer="test", correlation_id="c")
    solve = bash('echo "Hello, world!" > hello.txt')
    with ScriptedLLMServer(Rules([], default=lambda body: solve if len(body["messages"]) == 2 else assistant("Done."))) \
            as server:
        settings = SamplerSettings(llm_base_url=server.base_url, harnesses=["oracle", "nop", "builtin"],
                                   skill_conditions=["without"])
        runs = {o.harness: o for o in SamplerService(ctx, settings).handle(event) if isinstance(o, TrajectoryVerified)}
        assert set(runs) == {"nop", "builtin"}  # no reference to play back
        record = VerificationRecord.model_validate(get_json(ctx.store, runs["builtin"].verification_key))
        assert runs["builtin"].passed and not record.task_validated
        off = SamplerSettings(llm_base_url=server.base_url, sample_unvalidated=False)
        assert list(SamplerService(ctx, off).handle(event)) == []
    invalid = event.model_copy(update={"payload": event.payload.model_copy(update={"reasons": ["oracle_fails"]})})
    assert list(SamplerService(ctx, SamplerSettings()).handle(invalid)) == []
