"""Every template yields a task the reviewer approves, for each reasoning profile."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_builder.patterns import DEMANDS, PatternPool
from skillgym_builder.templates import registry
from skillgym_core.contracts.events import EnvBuilt, EnvReviewed
from skillgym_reviewer import ReviewerService

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap


def test_one_template_per_reasoning_profile() -> None:
    profiles = {registry().get(t).spec.profile for t in registry().ids()}
    assert profiles == {"procedural", "abductive", "constraint", "partial-order"}


def test_pattern_pool_covers_every_capability_demand() -> None:
    pool = PatternPool.builtin()
    assert len(pool.patterns) >= 30
    assert {p.demand for p in pool.patterns.values()} == set(DEMANDS)
    knobs = {k for t in registry().ids() for k in registry().get(t).supported_knobs}
    assert knobs <= {p.knob for p in pool.patterns.values()}
    chosen = pool.choose(random.Random(1), knobs, 3)
    assert len({p.demand for p in chosen}) == len(chosen) and all(p.knob in knobs for p in chosen)


@pytest.mark.slow
@pytest.mark.parametrize("template_id", registry().ids())
@pytest.mark.parametrize("patterns", [0, 2])
def test_template_task_is_approved(tmp_path: Path, template_id: str, patterns: int) -> None:
    ctx = make_context(tmp_path)
    settings = BuilderSettings(preferred_templates=[template_id], patterns_per_task=patterns)
    built = BuilderService(ctx, settings).handle(wrap(put_skill(ctx.store, FIXTURES / "csv-cleanup")))[0]
    assert isinstance(built, EnvBuilt) and built.template == template_id
    reviewed = ReviewerService(ctx).handle(wrap(built))[0]
    assert isinstance(reviewed, EnvReviewed)
    assert reviewed.approved, reviewed.reasons
