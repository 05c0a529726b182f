"""Task choice for a sampling spec: filters, families balanced, and within a family the tasks
the policy solves sometimes preferred over those it always or never solves."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from skillgym_core.rlenv.api import SampleSpec
from skillgym_envserver.catalog import TaskEntry
from skillgym_envserver.curriculum import Curriculum, NoTaskMatches


def _entry(task_id: str, family: str, difficulty: str = "medium") -> TaskEntry:
    return TaskEntry(task_id, f"tasks/{task_id}/package.tar.gz", "skill", "skill", family, "data-science",
                     difficulty, Path("/nonexistent"))


def test_filters_apply_and_no_match_is_a_typed_error() -> None:
    entries = [_entry("t1", "tabular-profile", "easy"), _entry("t2", "git-forensics", "hard")]
    curriculum = Curriculum()
    assert curriculum.choose(entries, SampleSpec(difficulty="hard", seed=1)).task_id == "t2"
    with pytest.raises(NoTaskMatches):
        curriculum.choose(entries, SampleSpec(family="molecule-props"))


def test_families_are_balanced_whatever_their_size() -> None:
    entries = [_entry(f"big{i}", "big-family") for i in range(20)] + [_entry("small", "small-family")]
    curriculum = Curriculum()
    picks = Counter(curriculum.choose(entries, SampleSpec(seed=seed)).family for seed in range(400))
    assert 150 < picks["small-family"] < 250


def test_tasks_inside_the_band_are_preferred() -> None:
    entries = [_entry("always", "f"), _entry("sometimes", "f"), _entry("never", "f")]
    curriculum = Curriculum(band=(0.1, 0.9), min_episodes=4)
    for _ in range(10):
        curriculum.record("always", True)
        curriculum.record("never", False)
    for passed in (True, False) * 5:
        curriculum.record("sometimes", passed)
    picks = Counter(curriculum.choose(entries, SampleSpec(seed=seed)).task_id for seed in range(600))
    assert picks["sometimes"] > 3 * max(picks["always"], picks["never"])


def test_a_saturated_task_asks_for_hardening_once() -> None:
    curriculum = Curriculum(min_episodes=4)
    for _ in range(3):
        curriculum.record("easy", True)
    assert curriculum.claim_hardening("easy", 0.9) is None  # too few episodes to judge
    curriculum.record("easy", True)
    claimed = curriculum.claim_hardening("easy", 0.9)
    assert claimed is not None and claimed.pass_rate == 1.0
    assert curriculum.claim_hardening("easy", 0.9) is None
