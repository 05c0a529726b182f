from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_core import keys
from skillgym_core.contracts.events import EnvBuilt, EnvFeedback, EnvReviewed, Payload
from skillgym_core.store.base import get_json
from skillgym_reviewer import ReviewerService

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap


def test_built_task_is_reviewed_in_the_sandbox_and_approved(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    settings = BuilderSettings(preferred_templates=["section-trace"])  # a build that does not depend on the plan
    built = BuilderService(ctx, settings).handle(wrap(put_skill(ctx.store, FIXTURES / "csv-cleanup")))[0]
    outputs = ReviewerService(ctx).handle(wrap(built))
    assert [type(o) for o in outputs] == [EnvReviewed]
    reviewed = outputs[0]
    assert isinstance(reviewed, EnvReviewed)
    assert reviewed.approved, reviewed.reasons
    report = get_json(ctx.store, keys.task_review(built.task_id))
    assert report["approved"] is True
    gates = {gate["gate"]: gate for gate in report["gates"]}
    assert gates["validity"]["details"]["initial_reward"] == 0.0
    assert gates["validity"]["details"]["solved_reward"] == 1.0
    assert isinstance(outputs[0], EnvReviewed) and not any(isinstance(o, EnvFeedback) for o in outputs)
    assert gates["mutation"]["passed"] and report["mutation"]["score"] >= 0.9
    assert gates["mutation"]["details"]["unkilled_items"] == []


def test_a_lineage_that_keeps_failing_conformance_is_dropped_when_its_rounds_are_spent(tmp_path: Path) -> None:
    from skillgym_reviewer import ReviewerSettings

    ctx = make_context(tmp_path)
    settings = BuilderSettings(preferred_templates=["section-trace"])
    built = BuilderService(ctx, settings).handle(wrap(put_skill(ctx.store, FIXTURES / "csv-cleanup")))[0]
    with ctx.task_checkout(built.package_key) as task:
        config = task.config()
        config.metadata.feedback_round = 2  # type: ignore[attr-defined]
        task.write_config(config)
        (task.tests / "test.sh").unlink()  # conformance fails: no verifier entry point
        package_key = ctx.save_task(built.task_id, task)
    broken = built.model_copy(update={"package_key": package_key})
    outputs = ReviewerService(ctx, ReviewerSettings(feedback_budget=2)).handle(wrap(broken))
    reviewed = [o for o in outputs if isinstance(o, EnvReviewed)]
    assert len(reviewed) == 1 and not reviewed[0].approved
    assert not any(isinstance(o, EnvFeedback) for o in outputs)
    report = get_json(ctx.store, keys.task_review(built.task_id))
    assert report["feedback_round"] == 2 and report["dropped"] is True


@pytest.mark.slow
def test_reviews_run_side_by_side_give_the_verdicts_they_give_one_at_a_time(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    builder = BuilderService(ctx, BuilderSettings(preferred_templates=["section-trace"]))
    built = [builder.handle(wrap(put_skill(ctx.store, FIXTURES / name)))[0] for name in ("csv-cleanup", "ledger-basics")]
    assert all(isinstance(event, EnvBuilt) for event in built)
    reviewer = ReviewerService(ctx)
    assert reviewer.concurrent

    def verdict(event: Payload) -> tuple[object, ...]:
        assert isinstance(event, EnvBuilt)
        reviewed = reviewer.handle(wrap(event))[0]
        assert isinstance(reviewed, EnvReviewed)
        report = get_json(ctx.store, keys.task_review(event.task_id))
        return reviewed.approved, reviewed.failure_type, [g["passed"] for g in report["gates"]], report["mutation"]["score"]

    one_at_a_time = [verdict(event) for event in built]
    with ThreadPoolExecutor(max_workers=2) as pool:
        side_by_side = list(pool.map(verdict, built))
    assert side_by_side == one_at_a_time and all(approved for approved, *_ in one_at_a_time)
