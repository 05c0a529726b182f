"""git-forensics: a real git history generated per instance (regression after a good tag,
untestable commits, look-alike commits, a merged branch, a revert, a leaked credential); the
agent bisects, reports, and commits a fix by the skill's conventions."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families import git_conventions
from skillgym_builder.families.git_forensics import GitForensicsFamily
from skillgym_builder.families.git_history import build_history
from skillgym_builder.families.seeds import seed_card, seed_skill_dir
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    read_json,
    rewrite_json,
    solution_helper,
    write_json,
)

HARD: dict[str, float] = {"record_count": 36, "noise_level": 2, "error_recovery": 1, "multi_step": 1, "long_horizon": 1}
REPORT = "out/forensics.json"
FAMILY = GitForensicsFamily()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args],
                          capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
                               "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
                               "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"})
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("git-commit-etiquette", "version-control")
    return build(FAMILY, card, HARD, tmp_path_factory.mktemp("git"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def expected(built: BuiltTask) -> dict[str, Any]:
    return json.loads((built.task.tests / "expected.json").read_text())


def test_fit_needs_git_work_and_says_why_not() -> None:
    assert FAMILY.suitability(card_for("git-commit-etiquette", "version-control")).code == "subcategory"
    by_terms = FAMILY.suitability(card_for("git-history-detective", None, category="development"))
    assert by_terms.fits and by_terms.code == "terms"
    mislabelled = FAMILY.suitability(card_for("config-layers", "version-control"))
    assert not mislabelled.fits and mislabelled.code == "no_git_work"
    unrelated = FAMILY.suitability(card_for("csv-cleanup", "editing-proofreading", category="writing"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


def test_the_repository_is_real_and_its_regression_bisectable(built: BuiltTask, tmp_path: Path) -> None:
    repo = built.workspace() / "repo"
    git(repo, "fsck", "--strict", "--no-progress")
    assert git(repo, "status", "--porcelain") == ""
    want = expected(built)
    assert f'{git(repo, "rev-parse", "main").strip()} refs/heads/main' in want["refs"]
    assert len(git(repo, "rev-list", "--merges", "main").split()) == 1
    assert any(s.startswith("revert: ") for s in git(repo, "log", "--format=%s", "main").splitlines())
    assert set(git(repo, "tag").split()) == {"v1.0.0", "v1.1.0", "v1.2.0"}
    assert want["leak"]["path"] not in git(repo, "ls-files")


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert {Path(p.path).suffix for p in built.metadata.protected_inputs} == {".pack", ".idx"}
    assert "apt-get install" in (built.task.root / "environment" / "Dockerfile").read_text()


def test_bisect_reference_and_rev_list_walk_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/rev-list-walk.sh")
    assert ok and built.verify(alternative).passed


def test_the_skills_conventions_are_needed(built: BuiltTask, solved: Path) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert set(dependence["facts"]) == {"branch", "header", "footer"}
    instruction = built.task.instruction()
    assert "bugfix/" not in instruction and "Closes" not in instruction and "git-commit-etiquette" in instruction
    branch = read_json(solved, REPORT)["fix"]["branch"]
    assert branch.startswith("bugfix/") and "Closes: " in git(solved / "repo", "log", "-1", "--format=%B")


def test_instruction_names_no_file_the_solution_changes_but_the_report(built: BuiltTask, solved: Path) -> None:
    instruction = built.task.instruction()
    initial = built.workspace()
    changed = [p for p in solved.rglob("*") if p.is_file() and not p.is_symlink()
               and (not (initial / p.relative_to(solved)).is_file()
                    or (initial / p.relative_to(solved)).read_bytes() != p.read_bytes())]
    assert any(p.name == "forensics.json" for p in changed)
    assert [p.name for p in changed if p.name in instruction] == ["forensics.json"]


def test_without_conventions_in_the_skill_the_instruction_states_them(tmp_path: Path,
                                                                      env_provider: LocalVenvProvider) -> None:
    card = card_for("git-history-detective", None, category="development")
    task = build(FAMILY, card, {}, tmp_path, env_provider)
    assert task.extra("skill_dependence")["claimed"] is False
    assert git_conventions.DEFAULT_BRANCH in task.task.instruction()
    ok, workspace = task.solve(with_skill=False)
    assert ok and task.verify(workspace).passed


@pytest.mark.parametrize("fixture", ["git-commit-etiquette", "git-history-detective", None])
def test_solution_side_convention_reader_agrees_with_the_builder(fixture: str | None) -> None:
    card = card_for(fixture, None) if fixture else seed_card(FAMILY.spec)
    folder = card.root if fixture else seed_skill_dir("git-forensics")
    namespace = solution_helper("git-forensics", "conventions.py", folder / "SKILL.md")
    conventions = git_conventions.read(card)
    mine = {key: (fact.value if fact else None) for key, fact in conventions.__dict__.items()}
    assert namespace["skill_conventions"]() == mine


def test_knobs_change_the_instance() -> None:
    card = seed_card(FAMILY.spec)
    easy = FAMILY.instantiate(card, 0, {})
    assert easy.params["untestable_commits"] == 0 and easy.params["decoys"] == 0
    raised = {name: FAMILY.instantiate(card, 0, {name: FAMILY.spec.knob(name).levels[-1]})  # type: ignore[union-attr]
              for name in HARD}
    assert raised["record_count"].params["commits"] > easy.params["commits"] + 30
    assert raised["error_recovery"].params["untestable_commits"] == 1
    assert raised["noise_level"].params["decoys"] == 4
    rubric = {name: {i["name"] for i in json.loads(out.tests["rubric.json"])} for name, out in raised.items()}
    assert "leak" in rubric["multi_step"] and "changelog" in rubric["long_horizon"]
    assert "leak" not in rubric["record_count"] and "credential" not in easy.instruction
    assert all(raised[name].workspace != easy.workspace for name in ("record_count", "noise_level", "error_recovery"))
    assert all(raised[name].instruction != easy.instruction for name in HARD)


def test_history_generation_is_deterministic_and_bisectable_for_many_seeds() -> None:
    import random

    for seed in range(25):
        variants: list[dict[str, float]] = [{**HARD, "record_count": 20, "noise_level": 4}, {**HARD, "record_count": 60}]
        for knobs in variants:
            first = build_history(random.Random(seed), knobs)
            assert first.workspace == build_history(random.Random(seed), knobs).workspace


Edit = Callable[[Path], None]


def _report(change: Callable[[dict[str, Any]], None]) -> Edit:
    return rewrite_json(REPORT, change)


def _merge_as_first_bad(built: BuiltTask) -> Edit:
    def change(report: dict[str, Any]) -> None:
        merge = git(built.task.workspace / "repo", "rev-list", "--merges", "-n", "1", "main").strip()
        report["first_bad"]["commit"] = merge
    return _report(change)


def _untestable_as_first_bad(built: BuiltTask) -> Edit:
    def change(report: dict[str, Any]) -> None:
        log = git(built.task.workspace / "repo", "log", "--format=%H %s", "main").splitlines()
        report["first_bad"]["commit"] = next(line.split()[0] for line in log if "shared defaults" in line)
    return _report(change)


def _shift_date(report: dict[str, Any]) -> None:
    date = report["first_bad"]["author_date"]
    report["first_bad"]["author_date"] = re.sub(r"[+-]\d\d:\d\d$", "+00:00", date)
    if report["first_bad"]["author_date"] == date:
        report["first_bad"]["author_date"] = date[:-6] + "+03:00"


def _in_repo(*commands: tuple[str, ...], report: Callable[[dict[str, Any], Path], None] | None = None) -> Edit:
    def edit(workspace: Path) -> None:
        for command in commands:
            git(workspace / "repo", *command)
        if report:
            value = read_json(workspace, REPORT)
            report(value, workspace)
            write_json(workspace, REPORT, value)
    return edit


def _new_tip(value: dict[str, Any], workspace: Path) -> None:
    value["fix"]["commit"] = git(workspace / "repo", "rev-parse", "HEAD").strip()
    value["fix"]["branch"] = git(workspace / "repo", "symbolic-ref", "--short", "HEAD").strip()


def _dirty(workspace: Path) -> None:
    path = next((workspace / "repo" / "src").rglob("__init__.py"))
    path.write_text(path.read_text() + "# local tweak\n")


def _paste_secret(built: BuiltTask) -> Edit:
    return _report(lambda r: r["leak"].update(note=expected(built)["leak"]["secret"]))


WRONG: list[tuple[str, Callable[[BuiltTask], Edit]]] = [
    ("the merge commit reported as the culprit", _merge_as_first_bad),
    ("an untestable commit reported as the culprit", _untestable_as_first_bad),
    ("an abbreviated commit id", lambda b: _report(lambda r: r["first_bad"].update(commit=r["first_bad"]["commit"][:12]))),
    ("the author date in another instant", lambda b: _report(_shift_date)),
    ("one changed file left out", lambda b: _report(lambda r: r["first_bad"].update(files=r["first_bad"]["files"][:-1] or ["README.md"]))),
    ("added and removed commits swapped", lambda b: _report(lambda r: r["leak"].update(added_in=r["leak"]["removed_in"], removed_in=r["leak"]["added_in"]))),
    ("the credential copied into the report", _paste_secret),
    ("the merge commit listed in the changelog", lambda b: _report(lambda r: r["changelog"]["groups"].setdefault("other", []).append(
        git(b.task.workspace / "repo", "rev-list", "--merges", "-n", "1", "main").strip()))),
    ("main moved to the fix", lambda b: _in_repo(("branch", "-f", "main", "HEAD"))),
    ("the footer left out of the message", lambda b: _in_repo(("commit", "--amend", "-q", "-m", "fix: restore the arithmetic"),
                                                             report=_new_tip)),
    ("a branch name without the ticket", lambda b: _in_repo(("branch", "-m", "bugfix/restore-the-arithmetic"), report=_new_tip)),
    ("a second commit on the branch", lambda b: _in_repo(("commit", "--allow-empty", "-q", "-m", "fix: tidy\n\nCloses: X"),
                                                        report=_new_tip)),
    ("an uncommitted change in the work tree", lambda b: _dirty),
    ("a fix that leaves the regression in place", lambda b: _in_repo(
        ("reset", "--soft", "HEAD~1"), ("checkout", "HEAD", "--", "src"), ("commit", "-q", "--allow-empty", "-C", "ORIG_HEAD"),
        report=_new_tip)),
]


@pytest.mark.parametrize(("name", "make"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_but_plausible_results_are_rejected(built: BuiltTask, solved: Path, name: str,
                                                  make: Callable[[BuiltTask], Edit]) -> None:
    assert not built.verify_edited(solved, make(built)).passed, name


def test_equivalent_reports_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reordered(report: dict[str, Any]) -> None:
        report["first_bad"]["files"].reverse()
        for ids in report["changelog"]["groups"].values():
            ids.reverse()
        report["first_bad"]["author_date"] = report["first_bad"]["author_date"]  # same instant, as written
    assert built.verify_edited(solved, _report(reordered)).passed


def test_tampering_with_the_history_is_rejected(built: BuiltTask, solved: Path) -> None:
    def append_to_pack(workspace: Path) -> None:
        pack = next((workspace / "repo" / ".git" / "objects" / "pack").glob("*.pack"))
        pack.write_bytes(pack.read_bytes() + b"\n")

    outcome = built.verify_edited(solved, append_to_pack)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"
    assert not built.verify_edited(solved, _in_repo(("tag", "-f", "v1.0.0", "main"))).passed


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "git-forensics")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "git-forensics")
