from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from skillgym_core.store.local import LocalStore
from skillgym_trainer.curation.balance import balance, cap_per_task
from skillgym_trainer.curation.build import CurationConfig, curate
from skillgym_trainer.curation.dedup import remove_exact, remove_near
from skillgym_trainer.curation.filters import Filters
from skillgym_trainer.curation.length import apply_length_limit, header_and_turns
from skillgym_trainer.curation.records import Candidate, load_candidates
from skillgym_trainer.curation.split import split_by_skill
from skillgym_trainer.errors import DatasetError
from skillgym_trainer.tokens import count_example

from tests.trainer.factories import populate


@pytest.fixture
def candidates(tmp_path: Path) -> list[Candidate]:
    store = LocalStore(tmp_path / "store")
    populate(store)
    report = load_candidates(store)
    assert report.errors == []
    return report.candidates


def test_loading_joins_events_and_validation_reports(candidates: list[Candidate]) -> None:
    assert len(candidates) == 16
    by_id = {c.trajectory_id: c for c in candidates}
    first = by_id["traj-0000"]
    assert (first.skill_id, first.category, first.label, first.model) == (
        "skill-csv-report",
        "data",
        "skill-dep",
        "teacher-b",
    )
    assert by_id["traj-0001"].label == "verifier-passed"


def test_broken_trajectory_is_reported_and_the_rest_load(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    populate(store)
    store.put_bytes("trajectories/traj-0003/atif.json", b"{not json")
    report = load_candidates(store)
    assert len(report.candidates) == 15
    assert [error["trajectory_id"] for error in report.errors] == ["traj-0003"]
    assert report.errors[0]["reason"] == "export"


def test_filters(candidates: list[Candidate]) -> None:
    kept, rejected = Filters().apply(candidates)
    assert rejected == {"not_passed": 1, "low_reward": 1}
    assert len(kept) == 14
    only_b, _ = Filters(models=["teacher-b"], labels=["skill-dep"], categories=["data"]).apply(candidates)
    assert {c.model for c in only_b} == {"teacher-b"}
    assert {c.label for c in only_b} == {"skill-dep"} and {c.category for c in only_b} == {"data"}
    none, rejected = Filters(harnesses=["codex"]).apply(candidates)
    assert none == [] and rejected["harness_excluded"] == 14
    first = next(c for c in candidates if c.trajectory_id == "traj-0000")  # passed, reward 1.0
    unproven = [dataclasses.replace(c, task_validated=False) if c is first else c for c in candidates]
    kept, rejected = Filters().apply(unproven)
    assert rejected == {"not_passed": 1, "low_reward": 1, "task_unvalidated": 1}
    assert first.trajectory_id not in {c.trajectory_id for c in kept}
    assert len(Filters(validated_tasks_only=False).apply(unproven)[0]) == 14


def test_exact_and_near_duplicates_keep_the_best_run(candidates: list[Candidate]) -> None:
    passed, _ = Filters().apply(candidates)
    exact, removed = remove_exact(passed)
    assert removed == 1
    ids = {c.trajectory_id for c in exact}
    assert "traj-0000" in ids and "traj-0020" not in ids  # reward 1.0 beats 0.95
    near, removed_near = remove_near(exact, threshold=0.8)
    assert removed_near == 1
    assert "traj-0021" not in {c.trajectory_id for c in near}
    assert len(remove_near(exact, threshold=0.8)[0]) == len(remove_near(list(reversed(exact)), threshold=0.8)[0])


@pytest.mark.parametrize("mode", ["drop", "truncate", "split"])
def test_length_limit_modes(candidates: list[Candidate], mode: str) -> None:
    long_ones = [c for c in candidates if c.passed and count_example(c.example) > 330]
    limit = 330
    out, report = apply_length_limit(candidates, limit, mode)  # type: ignore[arg-type]
    assert report.over_limit == len(long_ones) > 0
    assert all(count_example(c.example) <= limit for c in out)
    if mode == "drop":
        assert report.dropped == report.over_limit and len(out) == len(candidates) - report.over_limit
    elif mode == "truncate":
        assert report.truncated + report.dropped == report.over_limit and report.truncated > 0
        cut = [c for c in out if c.trajectory_id in {x.trajectory_id for x in long_ones}]
        for candidate in cut:
            header, turns = header_and_turns(candidate.example["messages"])
            assert [m["role"] for m in header] == ["system", "user"]
            assert all(turn[0]["role"] == "assistant" for turn in turns)
    else:
        assert report.split > 0 and report.parts >= 2 * report.split
        parts = [c for c in out if c.part > 0]
        assert parts and len({c.example_id for c in out}) == len(out)


def test_cap_and_balance(candidates: list[Candidate]) -> None:
    capped, removed = cap_per_task(candidates, 1)
    assert removed == 2  # traj-0020 shares task-0000, traj-0021 shares task-0001
    assert len({c.task_id for c in capped}) == len(capped)
    balanced, removed_groups = balance(candidates, "configuration", max_ratio=1.0)
    counts: dict[str, int] = {}
    for c in balanced:
        counts[c.configuration] = counts.get(c.configuration, 0) + 1
    assert len(set(counts.values())) == 1 and removed_groups


def test_split_by_skill_never_shares_a_skill(candidates: list[Candidate]) -> None:
    train, evaluation = split_by_skill(candidates, 0.3, seed=3)
    assert evaluation and train
    assert not {c.skill_id for c in train} & {c.skill_id for c in evaluation}
    assert 0.1 <= len(evaluation) / len(candidates) <= 0.5


def test_curate_reports_every_stage(candidates: list[Candidate]) -> None:
    config = CurationConfig(near_dup_threshold=0.8, max_tokens=330, length_mode="split", max_per_task=3)
    dataset = curate(candidates, config)
    pipeline = dataset.pipeline
    assert pipeline["filtered"] == {"not_passed": 1, "low_reward": 1}
    assert pipeline["exact_duplicates"] == 1 and pipeline["near_duplicates"] == 1
    assert pipeline["length"]["split"] > 0
    with pytest.raises(DatasetError):
        curate(candidates, CurationConfig(filters=Filters(models=["nobody"])))
    with pytest.raises(DatasetError):
        CurationConfig(balance_by="colour")
