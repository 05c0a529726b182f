"""Each family's task, built by the builder service, passes the reviewer's gates (validity,
leakage, mutation probes, declared equivalences) with its environment built for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_builder.families import registry
from skillgym_builder.families.seeds import seed_skill_dir
from skillgym_core.contracts.events import EnvBuilt, EnvReviewed
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_reviewer import ReviewerService, ReviewerSettings

from tests.builder.skills import FIXTURES, make_context, put_skill, wrap

pytestmark = pytest.mark.slow


def review(tmp_path: Path, cache: Path, skill_dir: Path, family_id: str) -> EnvReviewed:
    ctx = make_context(tmp_path)
    spec = registry().get(family_id).spec
    builder = BuilderService(ctx, BuilderSettings(env_cache=cache, family_difficulty="medium"))
    subcategory = spec.subcategories[0] if spec.subcategories else "data-analysis"
    skill = put_skill(ctx.store, skill_dir, subcategory=subcategory, category=spec.category)
    built = builder.handle(wrap(skill))
    assert len(built) == 1 and isinstance(built[0], EnvBuilt) and built[0].template == family_id
    reviewed = ReviewerService(ctx, ReviewerSettings(env_cache=cache)).handle(wrap(built[0]))[0]
    assert isinstance(reviewed, EnvReviewed)
    return reviewed


@pytest.mark.parametrize("family_id", registry().ids())
def test_family_task_is_approved_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider, family_id: str) -> None:
    """Every family, built for its own example skill, passes review at medium difficulty."""
    reviewed = review(tmp_path, env_provider.cache_dir, seed_skill_dir(family_id), family_id)
    assert reviewed.approved, reviewed.reasons


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Chromium (scripts/install-sandbox.sh)")
def test_a_p5_task_is_approved_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    """A skill written for p5.js: its page is opened in Chromium by every probe's verifier run."""
    reviewed = review(tmp_path, env_provider.cache_dir, FIXTURES / "p5-tiles", "image-compose")
    assert reviewed.approved, reviewed.reasons
