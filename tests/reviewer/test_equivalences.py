"""Declared equivalences: loading them, the mutants they cover, the rewrites a fair verifier must
accept; and the answers left open by a task's alternative solutions. The two review tests run
the real sandbox: a declared reordering is not held against an order-blind verifier, and a
verifier that rejects the declared reordering is too strict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_reviewer import ReviewerSettings, review_task_dir
from skillgym_reviewer.gates.mutation import EquivalenceError, Equivalences, Mutant
from skillgym_reviewer.gates.mutation.variation import OpenAnswers

from tests.reviewer import catalogue


def _task(tmp_path: Path, declared: dict[str, object] | None, review: dict[str, object] | None = None) -> TaskDir:
    task = catalogue.write_task(tmp_path / "task", equivalences=declared)  # type: ignore[arg-type]
    if review is not None:
        config = task.config()
        config.metadata.review = review
        task.write_config(config)
    return task


def test_declarations_load_from_tests_and_task_toml(tmp_path: Path) -> None:
    task = _task(tmp_path, {"answer.json": ["reorder_lists"], "*.md": "whitespace"},
                 review={"equivalences": {"answer.json": ["case"]}})
    equivalences = Equivalences.load(task, task.config().metadata.review)
    assert equivalences.declared_for("answer.json") == {"reorder_lists", "case"}
    assert equivalences.declared_for("docs/report.md") == {"whitespace"}
    assert equivalences.declared_for("other.json") == set()


def test_unknown_or_malformed_declarations_are_typed_errors(tmp_path: Path) -> None:
    task = _task(tmp_path, {"answer.json": ["reorder_everything"]})
    with pytest.raises(EquivalenceError) as caught:
        Equivalences.load(task, {})
    assert caught.value.reason == "unknown_equivalence" and "reorder_everything" in str(caught.value)
    (task.tests / "equivalences.json").write_text("[not json")
    with pytest.raises(EquivalenceError) as malformed:
        Equivalences.load(task, {})
    assert malformed.value.reason == "equivalences_invalid"


def test_declared_reordering_covers_order_mutants_only() -> None:
    equivalences = Equivalences({"answer.json": {"reorder_lists"}})
    swap = Mutant("answer.json", "swap_elements", "$.tags[0]", b"[]", "order")
    drop = Mutant("answer.json", "drop_element", "$.tags[0]", b"[]", "shape")
    elsewhere = Mutant("plan.txt", "swap_lines", "lines 1-2", b"", "order")
    assert equivalences.covering(swap) == "reorder_lists"
    assert equivalences.covering(drop) is None and equivalences.covering(elsewhere) is None


def test_rewrites_per_kind() -> None:
    answer = json.dumps({"tags": ["b", "a"], "n": 2}).encode()
    rewrites = dict(Equivalences({"answer.json": {"reorder_lists", "case", "number_format"}}).rewrites("answer.json", answer))
    assert json.loads(rewrites["answer.json:reorder_lists"]) == {"tags": ["a", "b"], "n": 2}
    assert json.loads(rewrites["answer.json:case"]) == {"tags": ["B", "A"], "n": 2}
    assert json.loads(rewrites["answer.json:number_format"]) == {"tags": ["b", "a"], "n": 2.0}
    assert list(json.loads(rewrites["answer.json:reformat_json"])) == ["n", "tags"]  # always: keys reordered
    table = b"name,qty\na,1\nb,2\n"
    rows = dict(Equivalences({"t.csv": {"reorder_rows", "reorder_columns"}}).rewrites("t.csv", table))
    assert rows["t.csv:reorder_rows"] == b"name,qty\nb,2\na,1\n"
    assert rows["t.csv:reorder_columns"] == b"qty,name\n1,a\n2,b\n"
    text = dict(Equivalences({"plan.txt": {"reorder_lines", "whitespace"}}).rewrites("plan.txt", b"wash up\ncook\n"))
    assert text["plan.txt:reorder_lines"] == b"cook\nwash up\n"
    assert text["plan.txt:trailing_whitespace"] == b"wash up \ncook \n"  # always
    assert text["plan.txt:whitespace"] == b"wash  up\n\ncook\n\n"


def test_alternative_solutions_leave_answers_open() -> None:
    reference = {"a.json": json.dumps({"picked": ["x", "y"], "total": 3, "label": "Done"}).encode(),
                 "plan.txt": b"a\nb\nc\n"}
    alternative = {"a.json": json.dumps({"picked": ["x", "y", "z"], "total": 4, "label": "DONE"}).encode(),
                   "plan.txt": b"b\na\nc\n"}
    answers = OpenAnswers.between(reference, [alternative])

    def excused(file: str, location: str, effect: str) -> bool:
        return answers.excuse(Mutant(file, "op", location, b"", effect)) is not None  # type: ignore[arg-type]

    assert excused("a.json", "$.picked[1]", "order") and excused("a.json", "$.picked", "shape")
    assert excused("a.json", "$.total", "value") and not excused("a.json", "$.total", "shape")
    assert not excused("a.json", "$.label", "value")  # only its case differs
    assert excused("plan.txt", "lines 1-2", "order") and not excused("plan.txt", "line 1", "shape")


@pytest.mark.slow
def test_declared_reordering_is_accepted_and_not_held_against_the_verifier(tmp_path: Path) -> None:
    strict_score = ReviewerSettings(mutation_min_score=1.0)
    undeclared = review_task_dir(catalogue.write_task(tmp_path / "undeclared").root, strict_score)
    assert not undeclared.passed and undeclared.failure_type == "too_lax"
    assert undeclared.mutation is not None
    assert any(":swap_elements:$.categories" in name for name in undeclared.mutation["survivors"])

    task = catalogue.write_task(tmp_path / "declared", equivalences={"out/report.json": ["reorder_lists"]})
    declared = review_task_dir(task.root, strict_score)
    assert declared.passed, declared.reasons
    assert declared.mutation is not None and declared.mutation["score"] == 1.0
    gates = {gate.gate: gate for gate in declared.gates}
    assert {p["name"]: p["accepted"] for p in gates["equivalence_probes"].details["probes"]}[
        "out/report.json:reorder_lists"] is True
    equivalent = [t for t in gates["mutation"].details["trials"] if t["verdict"] == "equivalent"]
    assert equivalent and all("declared equivalent (reorder_lists)" in t["note"] for t in equivalent)


@pytest.mark.slow
def test_verifier_rejecting_a_declared_reordering_is_too_strict(tmp_path: Path) -> None:
    task = catalogue.write_task(tmp_path / "ordered", categories="in_order",
                                equivalences={"out/report.json": ["reorder_lists"]})
    report = review_task_dir(task.root)
    assert not report.passed and report.failure_type == "too_strict"
    assert any("equivalence_probes: verifier rejects an equivalent answer: out/report.json:reorder_lists" in r
               for r in report.reasons), report.reasons
