"""test-repair: a generated package with planted bugs its protected suite exposes; the verifier
runs the suite and regenerated hidden cases, the agent's code only through run_untrusted."""

from __future__ import annotations

import importlib.util
from importlib._bootstrap_external import _code_to_timestamp_pyc  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.katas import KATAS
from skillgym_builder.families.test_repair import TestRepairFamily, edits
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
)

KNOBS = {"record_count": 5, "multi_step": 2, "error_recovery": 1, "distractor_files": 1}
BY_FUNCTION = {kata.function: kata for kata in KATAS}
PASS_EVERYTHING = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("tdd-workflow", "testing-qa")
    return build(TestRepairFamily(), card, KNOBS, tmp_path_factory.mktemp("repair"), env_provider, seed=3)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def _package(built: BuiltTask) -> str:
    return str(built.metadata.params["package"])


def _module(built: BuiltTask, function: str) -> str:
    return f"project/{_package(built)}/{BY_FUNCTION[function].module}.py"


def test_edits_turn_the_buggy_source_into_the_fixed_one() -> None:
    kata = BY_FUNCTION["chunk"]
    buggy = kata.source
    for bug in kata.bugs:
        buggy = bug.plant(buggy)
    fixed = buggy
    for edit in edits("m.py", buggy, kata.source):
        assert fixed.count(edit["old"]) == 1
        fixed = fixed.replace(edit["old"], edit["new"])
    assert fixed == kata.source


def test_task_conforms_and_the_buggy_package_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    outcome = built.untouched()
    assert not outcome.passed and outcome.rewards["visible_suite"] == 0 and outcome.rewards["hidden_cases"] < 1
    assert all(p.path.startswith("project/tests/") or p.path.endswith("pytest.ini")
               for p in built.metadata.protected_inputs)


def test_reference_fix_and_a_rewrite_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, rewritten = built.solve("alternatives/rewrite-modules.sh")
    assert ok and built.verify(rewritten).passed


def test_no_skill_dependence_is_claimed_and_none_is_found(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] is False and "holds" not in dependence
    assert dependence["without_skill"]["passed"]


def test_hidden_cases_are_not_in_the_workspace(built: BuiltTask) -> None:
    tests = (built.task.root / "tests" / "reference.json").read_text()
    workspace = "\n".join(p.read_text() for p in built.task.workspace.rglob("*.py"))
    assert "def cases(rng)" in tests and "def cases(rng)" not in workspace


def _half_fixed(built: BuiltTask) -> Any:
    function, bugs = next((f, b) for f, b in built.metadata.params["bugs"].items() if len(b) == 2)
    kata = BY_FUNCTION[function]
    bug = next(b for b in kata.bugs if b.id == bugs[0])

    def edit(workspace: Path) -> None:
        path = workspace / _module(built, function)
        path.write_text(bug.plant(path.read_text()))

    return edit


def _suite_forced_green(built: BuiltTask) -> Any:
    def edit(workspace: Path) -> None:
        for function, bugs in built.metadata.params["bugs"].items():
            kata = BY_FUNCTION[function]
            path = workspace / _module(built, function)
            source = kata.source
            for bug in (b for b in kata.bugs if b.id in bugs):
                source = bug.plant(source)
            path.write_text(source)
        (workspace / "project" / "conftest.py").write_text(PASS_EVERYTHING)

    return edit


def _errors_swallowed(built: BuiltTask) -> Any:
    def edit(workspace: Path) -> None:
        for function in built.metadata.params["bugs"]:
            path = workspace / _module(built, function)
            path.write_text(path.read_text() + f"\n\n_checked = {function}\n\n\ndef {function}(*args):\n"
                            "    try:\n        return _checked(*args)\n    except ValueError:\n        return None\n")

    return edit


def _test_edited(built: BuiltTask) -> Any:
    def edit(workspace: Path) -> None:
        test = next((workspace / "project" / "tests").glob("test_*.py"))
        test.write_text(test.read_text() + "\n# reviewed\n")

    return edit


@pytest.mark.parametrize("name", ["half fixed", "suite forced green", "errors swallowed", "test edited"])
def test_wrong_but_plausible_repairs_are_rejected(built: BuiltTask, solved: Path, name: str) -> None:
    edit = {"half fixed": _half_fixed, "suite forced green": _suite_forced_green,
            "errors swallowed": _errors_swallowed, "test edited": _test_edited}[name](built)
    assert not built.verify_edited(solved, edit).passed, name


def test_stale_bytecode_does_not_hide_the_fix(built: BuiltTask, solved: Path) -> None:
    def stale(workspace: Path) -> None:
        cache = workspace / "project" / _package(built) / "__pycache__"
        cache.mkdir(exist_ok=True)
        (cache / "__init__.cpython-311.pyc").write_bytes(b"not bytecode")

    assert built.verify_edited(solved, stale).passed


def test_bytecode_of_the_fixed_sources_does_not_pass_the_buggy_ones(built: BuiltTask, solved: Path) -> None:
    """Python trusts a cached file whose header claims its source's timestamp and size: the
    buggy sources with the fixed ones' bytecode stamped that way must still fail."""
    def planted(workspace: Path) -> None:
        package = workspace / "project" / _package(built)
        for source in package.glob("*.py"):
            fixed = (solved / source.relative_to(workspace)).read_text()
            stat = source.stat()
            code = compile(fixed, str(source), "exec")
            cached = Path(importlib.util.cache_from_source(str(source)))
            cached.parent.mkdir(exist_ok=True)
            cached.write_bytes(_code_to_timestamp_pyc(code, int(stat.st_mtime), stat.st_size))

    assert not built.verify_edited(built.workspace(), planted).passed


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "test-repair")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "test-repair")


def test_a_skill_is_not_a_testing_skill_for_the_pytest_its_own_tests_import(tmp_path: Path) -> None:
    """A data skill that ships a pytest suite for its script is not about pytest: test-repair
    does not take it; one whose procedure installs pytest still fits."""
    from skillgym_builder.families.evidence import SkillEvidence
    from skillgym_builder.skillcard import card_from_folder
    from skillgym_ingest.analyze import analyze_path
    from skillgym_ingest.settings import IngestSettings

    folder = tmp_path / "risk-score"
    (folder / "tests").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: risk-score\ndescription: Score variant risk from a CSV of "
                                     "genotypes.\n---\n\n# Risk score\n\nRun `python risk_score.py calls.csv` "
                                     "and report the highest-risk variants.\n")
    (folder / "risk_score.py").write_text("import csv\nimport sys\n\nprint(list(csv.reader(open(sys.argv[1]))))\n")
    (folder / "tests" / "test_risk_score.py").write_text("import pytest\n\n\ndef test_it():\n    assert True\n")

    def verdict() -> Any:
        record = analyze_path(folder, str(folder), IngestSettings(workers=1)).record
        card = card_from_folder(record, folder)
        return SkillEvidence.of(card), TestRepairFamily().suitability(card)

    evidence, fit = verdict()
    assert "pytest" not in evidence.packages and not fit.fits
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "\n```bash\npip install pytest\n```\n")
    assert verdict()[1].fits


JUNIT_SKILL = """---
name: java-junit
description: Write JUnit 5 tests for Java services.
---

# JUnit testing

Run the failing tests first:

```bash
mvn -q test
```

```java
@Test
void addsTwoNumbers() {
    assertEquals(4, Calculator.add(2, 2));
}
```
"""


def test_a_testing_skill_for_another_language_gets_no_python_repair_task(tmp_path: Path) -> None:
    """test-repair's projects are Python: a JUnit or Jest skill would learn nothing it teaches
    from one. A pytest skill, and a testing skill that shows no code at all, still fit."""
    family = TestRepairFamily()
    folder = tmp_path / "java-junit"
    folder.mkdir()
    (folder / "SKILL.md").write_text(JUNIT_SKILL)
    fit = family.suitability(card_for("java-junit", "testing-qa", category="development", folder=folder))
    assert (fit.fits, fit.code, fit.evidence) == (False, "skill_language_elsewhere", ["language:java"])
    (folder / "SKILL.md").write_text(JUNIT_SKILL.replace("```java", "```typescript"))
    assert family.suitability(card_for("jest", "testing-qa", category="development", folder=folder)).evidence == [
        "language:javascript", "language:typescript"]  # Jest, by its name, and the code's TypeScript
    (folder / "SKILL.md").write_text(JUNIT_SKILL.replace("```java", "```python").replace("mvn -q test", "pytest -q"))
    assert family.suitability(card_for("py", "testing-qa", category="development", folder=folder)).fits
    (folder / "SKILL.md").write_text("---\nname: tdd\ndescription: d\n---\n\nWrite the failing test first.\n")
    assert family.suitability(card_for("tdd", "testing-qa", category="development", folder=folder)).fits
    # no code at all, but named for a .NET test framework
    fit = family.suitability(card_for("csharp-xunit", "testing-qa", category="development", folder=folder))
    assert (fit.fits, fit.evidence) == (False, ["language:csharp"])
