"""``skillgym families new``: a family written by the scaffold into a package of its own, installed
beside SkillGym, is found through the ``skillgym.families`` entry points, and the task it builds
for its example skill is approved by the reviewer and validated in the sandbox."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from skillgym_builder.families import base, registry
from skillgym_builder.families.seeds import seed_skill_dir
from skillgym_core.envbuild import LocalVenvProvider

from skillgym.family_check import ConformanceRunner
from skillgym.family_scaffold import ScaffoldError, scaffold


def _clear() -> None:
    """Forget installed families, their modules included (each test installs its own copy)."""
    base.external_homes.cache_clear()
    registry.cache_clear()
    for name in [m for m in sys.modules if m.startswith("skillgym_family_")]:
        del sys.modules[name]


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, weaken: str | None = None) -> Iterator[str]:
    """The scaffolded family's package installed (built by pip) into a folder put on the path;
    ``weaken``: the rubric item whose check is made to pass anything first."""
    made = scaffold("word-tally", tmp_path / "src")
    if weaken:
        verify = made.root / made.package / "verify.py"
        verify.write_text(verify.read_text().replace(f"def {weaken}():\n", f"def {weaken}():\n    return True\n"))
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(site), str(made.root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    monkeypatch.syspath_prepend(str(site))
    _clear()
    yield made.family_id
    _clear()


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from _install(tmp_path, monkeypatch)


@pytest.fixture
def installed_lax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from _install(tmp_path, monkeypatch, weaken="counts")


def test_the_scaffolded_family_is_found_through_its_entry_point(installed: str) -> None:
    assert installed in base.family_ids() and installed in registry().ids()
    family = registry().get(installed)
    assert type(family).__module__ == "skillgym_family_word_tally.generator"
    assert base.family_home(installed).joinpath("verify.py").is_file()


@pytest.mark.slow
def test_its_task_is_built_reviewed_and_validated(installed: str, tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    from skillgym_builder import BuilderService, BuilderSettings
    from skillgym_core.contracts.events import EnvBuilt, EnvReviewed
    from skillgym_core.sandbox.workspace import safe_copy_tree
    from skillgym_reviewer import ReviewerService, ReviewerSettings
    from skillgym_validator.settings import ValidatorSettings
    from skillgym_validator.validation import validate_task_dirs

    from tests.builder.skills import make_context, put_skill, wrap

    ctx = make_context(tmp_path / "context")
    skill = put_skill(ctx.store, seed_skill_dir(installed), category="data-science", subcategory="data-analysis")
    settings = BuilderSettings(env_cache=env_provider.cache_dir, family_difficulty="medium")
    built = BuilderService(ctx, settings).handle(wrap(skill))
    assert len(built) == 1 and isinstance(built[0], EnvBuilt) and built[0].template == installed
    reviewed = ReviewerService(ctx, ReviewerSettings(env_cache=env_provider.cache_dir)).handle(wrap(built[0]))[0]
    assert isinstance(reviewed, EnvReviewed)
    assert reviewed.approved, reviewed.reasons
    task_root = tmp_path / "task"
    with ctx.task_checkout(built[0].package_key) as task:
        safe_copy_tree(task.root, task_root, max_bytes=16 * 1024 * 1024, max_files=1000)
    record = validate_task_dirs([task_root], ValidatorSettings(oracle_runs=1, env_cache=env_provider.cache_dir))[0]
    assert record["valid"], record


@pytest.mark.parametrize(("name", "reason"), [("Word_Tally", "bad_name"), ("skill-script", "name_taken")])
def test_a_bad_or_taken_name_writes_nothing(tmp_path: Path, name: str, reason: str) -> None:
    with pytest.raises(ScaffoldError) as caught:
        scaffold(name, tmp_path, shipped=frozenset(base.family_ids()))
    assert caught.value.reason == reason and list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_not_overwritten(tmp_path: Path) -> None:
    scaffold("word-tally", tmp_path)
    with pytest.raises(ScaffoldError) as caught:
        scaffold("word-tally", tmp_path)
    assert caught.value.reason == "exists"


@pytest.mark.slow
def test_the_scaffolded_family_passes_the_conformance_suite(installed: str, tmp_path: Path,
                                                             env_provider: LocalVenvProvider) -> None:
    report = ConformanceRunner(env_provider.cache_dir, tmp_path).family(installed, [seed_skill_dir(installed)])
    checks = {c.name: c.passed for c in report.skills[0].checks}
    assert report.passed, report.record()
    assert set(checks) == {"fits", "preset:easy", "preset:medium", "preset:hard", "deterministic", "varies",
                           "uses_skill", "review", "mutation", "valid"}


@pytest.mark.slow
def test_a_family_whose_check_accepts_anything_fails_the_suite(installed_lax: str, tmp_path: Path,
                                                               env_provider: LocalVenvProvider) -> None:
    report = ConformanceRunner(env_provider.cache_dir, tmp_path).family(installed_lax, [seed_skill_dir(installed_lax)])
    failed = {c.name: c.detail for c in report.skills[0].checks if not c.passed}
    assert not report.passed and set(failed) == {"review", "mutation"}, failed
    assert "counts" in failed["mutation"]


@pytest.mark.parametrize("family_id", registry().ids())
def test_every_shipped_family_passes_the_build_checks_on_its_example_skill(family_id: str, tmp_path: Path,
                                                                           env_provider: LocalVenvProvider) -> None:
    """Presets, determinism, variety and skill use; the review of each family's example task is
    its own test (``assert_reviewer_approves``)."""
    report = ConformanceRunner(env_provider.cache_dir, tmp_path, review=False).family(family_id, [seed_skill_dir(family_id)])
    assert report.passed, report.record()
