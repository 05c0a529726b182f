"""The mutation gate on real tasks in the real sandbox: the score per task and per rubric item,
partial solutions, stale outputs on changed inputs, the too_lax verdict, its feedback to the
builder and its metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from skillgym_core.contracts.events import EnvBuilt, EnvFeedback, EnvReviewed
from skillgym_core.taskrun import VerifierOutcome
from skillgym_reviewer import ReviewerService, ReviewerSettings, ReviewReport, review_task_dir
from skillgym_reviewer.gates.mutation.model import TrialResult
from skillgym_reviewer.gates.mutation.score import MutationScore, judge, rubric_items

from tests.builder.skills import make_context, wrap
from tests.reviewer import catalogue


def _gate(report: ReviewReport, name: str) -> Any:
    return next(gate for gate in report.gates if gate.gate == name)


def _trials(report: ReviewReport, kind: str) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in _gate(report, "mutation").details["trials"] if t["kind"] == kind}


def _outcome(rewards: dict[str, float], passed: bool) -> VerifierOutcome:
    return VerifierOutcome(rewards["reward"], rewards, passed, None if passed else "verifier_rejected", None)


def test_score_counts_killed_mutants_per_item() -> None:
    solved = _outcome({"reward": 1.0, "a": 1.0, "b": 1.0}, True)
    assert rubric_items(solved) == ["a", "b"]
    assert rubric_items(_outcome({"reward": 1.0}, True)) == ["reward"]
    assert judge(_outcome({"reward": 0.5, "a": 0.0, "b": 1.0}, False), ["a", "b"]) == ("killed", ["a"], "")
    assert judge(_outcome({"reward": 1.0, "a": 1.0, "b": 1.0}, True), ["a", "b"])[0] == "survived"
    results = [
        TrialResult("m1", "output", "killed", 0.5, ["a"]),
        TrialResult("m2", "output", "killed", 0.0, ["a"]),
        TrialResult("m3", "output", "survived", 1.0),
        TrialResult("m4", "output", "equivalent", 1.0, note="declared"),
    ]
    score = MutationScore(["a", "b"], results)
    assert (score.tried, score.killed, score.score) == (3, 2, 0.6667)
    assert score.item_kills == {"a": 2, "b": 0} and score.unkilled_items == ["b"] and score.survivors == ["m3"]
    reasons = score.shortfalls(0.9, every_item=True)
    assert "mutation score 0.67 < 0.90" in reasons[0] and "m3" in reasons[0]
    assert "rubric items that never failed on a wrong result: b" in reasons[1]
    assert MutationScore(["a"], [TrialResult("m", "output", "killed", 0.0, ["a"])]).shortfalls(0.9, True) == []


@pytest.mark.slow
def test_good_task_passes_with_per_item_scores_and_partial_solutions(tmp_path: Path) -> None:
    report = review_task_dir(catalogue.write_task(tmp_path / "good").root)
    assert report.passed, report.reasons
    mutation = report.mutation
    assert mutation is not None and mutation["score"] >= 0.9 and mutation["unkilled_items"] == []
    assert set(mutation["items"]) == {"categories", "total", "count"}
    assert all(item["kills"] >= 1 for item in mutation["items"].values())
    outputs = _trials(report, "output")
    nudged = outputs["out/report.json:leaf_nudge:$.total"]
    assert nudged["verdict"] == "killed" and nudged["failed_items"] == ["total"]
    assert 0 < nudged["reward"] < 1
    partial = _trials(report, "partial_solution")
    skipped = partial["solve.sh:skip_step:line 6 (python3 /solution/totals.py)"]
    assert skipped["verdict"] == "killed" and sorted(skipped["failed_items"]) == ["count", "total"]
    assert len(partial) == 3 and _gate(report, "mutation").details["thresholds"] == {"min_score": 0.9, "every_item": True}


@pytest.mark.slow
def test_a_skipped_step_the_verifier_accepts_is_a_surviving_mutant(tmp_path: Path) -> None:
    report = review_task_dir(catalogue.write_task(tmp_path / "lenient", total="may_be_missing", count="may_be_missing").root)
    assert not report.passed and report.failure_type == "too_lax"
    skipped = _trials(report, "partial_solution")["solve.sh:skip_step:line 6 (python3 /solution/totals.py)"]
    assert skipped["verdict"] == "survived"
    assert report.mutation is not None and "solve.sh:skip_step:line 6 (python3 /solution/totals.py)" in report.mutation["survivors"]


@pytest.mark.slow
def test_stale_outputs_on_a_changed_input(tmp_path: Path) -> None:
    """A verifier that judges the total against the workspace's own items.csv must reject the
    reference outputs once items.csv changed; one that only checks the type does not."""
    honest = review_task_dir(catalogue.write_task(tmp_path / "honest", total="from_workspace", protect=False).root)
    stale = _trials(honest, "perturbed_input")
    assert len(stale) == 1
    (name, trial), = stale.items()
    assert name.startswith("items.csv:stale_outputs:perturb_cell:") and trial["verdict"] == "killed"
    assert trial["failed_items"] == ["total"]

    lax = review_task_dir(catalogue.write_task(tmp_path / "lax", total="is_number", protect=False).root)
    assert not lax.passed and lax.failure_type == "too_lax"
    (lax_trial,) = _trials(lax, "perturbed_input").values()
    assert lax_trial["verdict"] == "survived"

    fixed_key = review_task_dir(catalogue.write_task(tmp_path / "key", protect=False).root)
    (key_trial,) = _trials(fixed_key, "perturbed_input").values()
    assert key_trial["verdict"] == "not_run" and "fixed key" in key_trial["note"]


@pytest.mark.slow
def test_too_lax_verdict_is_fed_back_to_the_builder_and_counted(tmp_path: Path) -> None:
    """The count check passes whatever the answer."""
    ctx = make_context(tmp_path)
    task = catalogue.write_task(tmp_path / "lax-count", count="anything")
    key = ctx.save_task("task-lax-count", task)
    labels = {"template": "catalogue"}
    rejected_before = REGISTRY.get_sample_value("skillgym_review_too_lax_rejections_total", labels) or 0.0
    scored_before = REGISTRY.get_sample_value("skillgym_review_mutation_score_count", labels) or 0.0
    event = EnvBuilt(task_id="task-lax-count", skill_id="skill-catalogue", package_key=key, template="catalogue")
    outputs = ReviewerService(ctx, ReviewerSettings()).handle(wrap(event))
    reviewed, feedback = outputs
    assert isinstance(reviewed, EnvReviewed) and not reviewed.approved and reviewed.failure_type == "too_lax"
    assert any(r.startswith("mutation: ") for r in reviewed.reasons)
    assert isinstance(feedback, EnvFeedback) and feedback.failure_type == "too_lax"
    assert any("rubric items that never failed on a wrong result: count" in r for r in feedback.reasons)
    assert any("leaf_nudge:$.count" in r for r in feedback.reasons)  # the surviving mutants are named
    assert REGISTRY.get_sample_value("skillgym_review_too_lax_rejections_total", labels) == rejected_before + 1
    assert REGISTRY.get_sample_value("skillgym_review_mutation_score_count", labels) == scored_before + 1
