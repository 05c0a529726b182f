from __future__ import annotations

from pathlib import Path

from skillgym_builder import BuilderService, BuilderSettings
from skillgym_builder.families import registry as family_registry
from skillgym_builder.patterns import PatternPool
from skillgym_builder.service import hardening_report_key
from skillgym_core.contracts.atif import Agent, Step, ToolCall, Trajectory
from skillgym_core.contracts.events import EnvBuilt, HardeningRequested
from skillgym_core.store.base import get_json
from skillgym_reviewer import ReviewerService

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap


def _trajectory(store, key: str) -> str:  # type: ignore[no-untyped-def]
    steps = [
        Step(step_id=1, source="user", message="solve the task"),
        Step(step_id=2, source="agent", message="", tool_calls=[
            ToolCall(tool_call_id="c1", function_name="bash", arguments={"command": "cat /app/items.jsonl"})]),
        Step(step_id=3, source="agent", message="done"),
    ]
    traj = Trajectory(agent=Agent(name="mini-swe-agent", version="2.4.6"), steps=steps)
    store.put_bytes(key, traj.model_dump_json().encode())
    return key


def test_easy_task_is_hardened_into_a_new_reviewed_revision(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    builder = BuilderService(ctx, BuilderSettings(preferred_templates=["procedure-dag"]))
    event = put_skill(ctx.store, FIXTURES / "csv-cleanup")
    first = builder.handle(wrap(event))[0]
    assert isinstance(first, EnvBuilt)
    with ctx.task_checkout(first.package_key) as task:
        before = task.config().metadata
    keys = [_trajectory(ctx.store, f"trajectories/t{i}/atif.json") for i in range(3)]
    request = HardeningRequested(task_id=first.task_id, skill_id=event.skill_id, pass_rate=0.9, round=1,
                                 trajectory_keys=keys)
    hardened = builder.handle(wrap(request))
    assert len(hardened) == 1 and isinstance(hardened[0], EnvBuilt)
    second = hardened[0]
    assert second.revision == before.revision + 1 and second.parent_task_id == first.task_id
    with ctx.task_checkout(second.package_key) as task:
        after = task.config().metadata
        assert set(after.difficulty_patterns) > set(before.difficulty_patterns)
        assert after.hardening["findings"]  # type: ignore[attr-defined]
        assert after.params["items"] >= before.params["items"]  # type: ignore[index]
    report = get_json(ctx.store, hardening_report_key(first.task_id, 1))
    assert report["outcome"] == "revised" and report["diagnosis"]["skill_read_rate"] == 0
    assert "skill_bypass_guard" in PatternPool.load(ctx.store).patterns
    reviewed = ReviewerService(ctx).handle(wrap(second))[0]
    assert reviewed.approved, reviewed.reasons  # type: ignore[union-attr]

    assert builder.handle(wrap(request.model_copy(update={"round": 3}))) == []
    assert get_json(ctx.store, hardening_report_key(first.task_id, 3))["outcome"] == "budget_spent"


def test_family_hardening_raises_one_knob_per_round_and_records_it(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    builder = BuilderService(ctx, BuilderSettings(max_hardening_rounds=20, check_skill_dependence=False))
    event = put_skill(ctx.store, FIXTURES / "config-layers", subcategory="version-control")
    current = builder.handle(wrap(event))[0]
    assert isinstance(current, EnvBuilt) and current.builder == "family"
    keys = [_trajectory(ctx.store, "trajectories/f0/atif.json")]
    seen: list[dict[str, float]] = []
    for round_ in range(1, 12):
        request = HardeningRequested(task_id=current.task_id, skill_id=event.skill_id, pass_rate=0.95, round=round_,
                                     trajectory_keys=keys)
        revised = builder.handle(wrap(request))
        report = get_json(ctx.store, hardening_report_key(current.task_id, round_))
        if not revised:
            assert report["outcome"] == "no_harder_variant" and report["knob_changes"] == []
            break
        assert report["outcome"] == "revised" and len(report["knob_changes"]) == 1
        nxt = revised[0]
        assert isinstance(nxt, EnvBuilt) and nxt.parent_task_id == current.task_id
        with ctx.task_checkout(nxt.package_key) as task:
            extra = task.config().metadata.model_extra or {}
            changed = report["knob_changes"][0]
            assert extra["knobs"][changed["knob"]] == changed["to"] > changed["from"]
            assert extra["knob_changes"][-1] == {**changed, "revision": nxt.revision}
            assert len(extra["knob_changes"]) == nxt.revision
            seen.append(extra["knobs"])
        current = nxt
    else:
        raise AssertionError("knobs never reached their top levels")
    spec = family_registry().get("layered-config").spec
    assert seen[-1] == {knob.name: knob.levels[-1] for knob in spec.knobs}
    assert len(seen) == sum(len(knob.levels) - 1 for knob in spec.knobs)
