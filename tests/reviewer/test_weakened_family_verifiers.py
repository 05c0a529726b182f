"""Every family's task, built for the family's example skill: the verifier weakened by making
one rubric item's check always pass (in the task's copy of the rubric runner, so verifiers of
any shape can be weakened) is rejected as too lax, the mutation gate naming that item."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_builder.families import registry
from skillgym_builder.families.seeds import seed_skill_dir
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_core.sandbox.workspace import safe_copy_tree
from skillgym_reviewer import ReviewerSettings, review_task_dir

from tests.builder.skills import make_context, put_skill, wrap
from tests.reviewer.weaken import rubric_items, weaken_runner

pytestmark = pytest.mark.slow
FAMILIES = registry().ids()
EXHAUSTIVE = os.environ.get("SKILLGYM_TEST_EXHAUSTIVE") == "1"
# A check that always passes never fails a mutant, so a few mutants are enough to expose it;
# the full budget is spent where the unweakened tasks are reviewed (test_family_review.py).
CHEAP_REVIEW = ReviewerSettings(mutation_max_mutants=12, mutation_skip_steps=False, mutation_stale_inputs=0,
                                mutation_llm_solutions=0, stability_reruns=0)


def _copy(source: Path, target: Path) -> Path:
    safe_copy_tree(source, target, max_bytes=64 * 1024 * 1024, max_files=5000)
    return target


@pytest.fixture(scope="module")
def env_cache(env_provider: LocalVenvProvider) -> Path:
    return env_provider.cache_dir


@pytest.fixture(scope="module")
def family_tasks(tmp_path_factory: pytest.TempPathFactory, env_cache: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("family-tasks")
    ctx = make_context(root)
    tasks = {}
    for family_id in FAMILIES:
        spec = registry().get(family_id).spec
        event = put_skill(ctx.store, seed_skill_dir(family_id), subcategory=spec.subcategories[0] if spec.subcategories else "data-analysis", category=spec.category)
        settings = BuilderSettings(env_cache=env_cache, family_difficulty="medium", check_skill_dependence=False)
        built = BuilderService(ctx, settings).handle(wrap(event))[0]
        assert isinstance(built, EnvBuilt) and built.template == family_id
        with ctx.task_checkout(built.package_key) as task:
            tasks[family_id] = _copy(task.root, root / family_id)
    return tasks


def _cases() -> list[tuple[str, str | None]]:
    """(family, rubric item) for every item a family's spec can score with
    ``SKILLGYM_TEST_EXHAUSTIVE=1``; otherwise one item per family (None: picked from the items the
    built instance scores, a different position for each family so the run still spreads over
    the rubric). Each case is a full review; all of them would not fit the CI budget."""
    if not EXHAUSTIVE:
        return [(family_id, None) for family_id in FAMILIES]
    return [(family_id, item.name) for family_id in FAMILIES for item in registry().get(family_id).spec.rubric]


@pytest.mark.parametrize(("family_id", "item"), _cases(), ids=[f"{f}-{i or 'one-item'}" for f, i in _cases()])
def test_every_weakened_family_verifier_is_rejected_as_too_lax(
    family_tasks: dict[str, Path], env_cache: Path, tmp_path: Path, family_id: str, item: str | None
) -> None:
    task_root = _copy(family_tasks[family_id], tmp_path / family_id)
    scored = rubric_items(task_root)
    if item is None:
        item = scored[FAMILIES.index(family_id) % len(scored)]
    elif item not in scored:
        pytest.skip(f"this instance of {family_id} does not score {item}")
    weaken_runner(task_root, item)
    report = review_task_dir(task_root, CHEAP_REVIEW.model_copy(update={"env_cache": env_cache}))
    gates = {gate.gate: gate for gate in report.gates}
    assert gates["validity"].passed, gates["validity"]
    assert not report.passed and report.failure_type == "too_lax", report.reasons
    assert item in gates["mutation"].details["unkilled_items"], gates["mutation"].details
