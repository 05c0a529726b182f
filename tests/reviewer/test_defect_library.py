"""The defect library (:mod:`tests.reviewer.defects`): every task is a well-formed Harbor task,
the full reviewer approves every sound one and rejects each planted defect with its expected
failure type.

Cases today's reviewer gets wrong are marked ``xfail(strict=True)`` with what it misses, so
they fail once the reviewer gets them right and the mark can go. A flaky verifier's verdict
changes from run to run, so whether one review catches it is chance: those marks are not
strict."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from skillgym_reviewer import ReviewerSettings, review_task_dir
from skillgym_reviewer.report import FAILURE_TYPES

from tests.reviewer.defects import GOOD, KINDS, LIBRARY, LibraryTask, smoke_subset

MAIN_KINDS = (
    "always-pass",
    "passes-untouched",
    "accepts-wrong-value",
    "ignores-constraint",
    "rejects-valid",
    "trusts-agent-input",
    "leaked-answer",
    "reachable-solution",
    "flaky",
)

AGENT_CODE_NOT_PROBED = "no probe plants output code that writes the reward files and ends the verifier"
EVERY_ITEM_RULE = (
    "rejected as too_lax: the mutation gate requires every rubric item to fail some mutant, and none of the "
    "sampled mutants touched {item} (whose check does reject a wrong value)"
)

# what today's reviewer does with these tasks instead of the expected verdict
KNOWN_MISSES: dict[str, str] = {
    "good/sales-by-region": EVERY_ITEM_RULE.format(item="$.grand_total"),
    "good/access-log-report": EVERY_ITEM_RULE.format(item="$.error_rate"),
    "good/inventory-dedupe": EVERY_ITEM_RULE.format(item="the CSV header"),
    "accepts-wrong-value/sensor-truncated-means": (
        "mutants move a number by about 5%, which changes the whole degrees; none moves a mean by less than a degree"
    ),
    "accepts-wrong-value/slugify-hidden-types-only": (
        "the shipped unit tests kill every code mutant, so the unchecked hidden slugs never matter to a probe"
    ),
    "ignores-constraint/overtime-limit": "no mutant adds an employee-week at or under the limit",
    "ignores-constraint/toc-anchor-convention": "no mutant changes an anchor's case or its spaces for hyphens",
    "ignores-constraint/git-full-commit-id": "no mutant shortens the commit id",
    "rejects-valid/access-log-key-order": EVERY_ITEM_RULE.format(item="$.error_rate")
    + "; the equivalence probe does catch the key order, as too_strict, but a later gate",
    "trusts-agent-input/overtime-limit-from-workspace": (
        "the tamper probe drops the last key of policy.json, the weekly limit, so the reference solution fails "
        "and the verifier is never seen grading a forged limit"
    ),
    "leaked-answer/overtime-answer-in-prose": (
        "the leak scan looks for whole answer files and for constants of 16+ characters; the prose names short values"
    ),
    "leaked-answer/git-commit-in-hint": "a 10-character prefix of the commit id is below the leak scan's 16 characters",
    "reachable-solution/slugify-fix-as-patch": "a patch of the fix is neither a copy of solution/ nor the answer",
    "agent-writes-verdict/slugify-imported-in-process": AGENT_CODE_NOT_PROBED,
    "agent-writes-verdict/slugify-tests-run-unconfined": AGENT_CODE_NOT_PROBED,
    "agent-writes-verdict/sales-script-run-unconfined": AGENT_CODE_NOT_PROBED,
}

FLAKY_REASON = (
    "the reviewer never compares two verifier runs on the same answer: a flaky verifier is rejected only when a run "
    "happens to fail, and then typed by the gate that saw it (checker_error, too_strict or too_lax)"
)


def _marks(task: LibraryTask) -> list[Any]:
    if task.kind == "flaky":
        return [pytest.mark.xfail(strict=False, reason=FLAKY_REASON)]
    if task.name in KNOWN_MISSES:
        return [pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[task.name])]
    return []


def _cases(tasks: list[LibraryTask] | tuple[LibraryTask, ...]) -> list[Any]:
    return [pytest.param(task, id=task.name, marks=_marks(task)) for task in tasks]


def _assert_verdict(task: LibraryTask, root: Path) -> None:
    report = review_task_dir(task.write(root).root, ReviewerSettings())
    if task.good:
        assert report.approved, f"{task.name} rejected ({report.failure_type}): {report.reasons}"
        return
    assert not report.approved, f"{task.name} approved; planted: {task.planted}"
    assert report.failure_type == task.failure_type, f"{task.name}: {report.failure_type}: {report.reasons}"


def test_library_spread() -> None:
    counts = Counter(task.kind for task in LIBRARY)
    assert len(LIBRARY) >= 40
    assert counts[GOOD] >= 8
    assert all(counts[kind] >= 4 for kind in MAIN_KINDS), counts
    assert set(counts) == set(KINDS)
    assert len({task.name for task in LIBRARY}) == len(LIBRARY)
    for task in LIBRARY:
        assert task.failure_type == KINDS[task.kind]
        assert task.good or (task.failure_type in FAILURE_TYPES and task.planted)
    assert set(KNOWN_MISSES) <= {task.name for task in LIBRARY}


@pytest.mark.parametrize("task", LIBRARY, ids=[task.name for task in LIBRARY])
def test_task_is_well_formed(tmp_path: Path, task: LibraryTask) -> None:
    built = task.write(tmp_path)
    assert built.check_layout() == []
    config = built.config()
    assert (built.solution / "solve.sh").is_file()
    # the task must not tell the reviewer what is wrong with it
    assert task.kind not in built.config_path.read_text() or task.kind == GOOD
    for item in config.metadata.protected_inputs:
        assert (built.workspace / item.path).is_file()


@pytest.mark.parametrize("task", _cases(smoke_subset()))
def test_reviewer_verdict_smoke(tmp_path: Path, task: LibraryTask) -> None:
    _assert_verdict(task, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("task", _cases(LIBRARY))
def test_reviewer_verdict(tmp_path: Path, task: LibraryTask) -> None:
    _assert_verdict(task, tmp_path)
