"""ledger-reconcile: a month's ledger reconciled with its bank statements (one a workbook made
with openpyxl), expense claims checked against a policy, the quarter's pipeline forecast; the
skill's receipt threshold, category limits and stage weights make the skill necessary."""

from __future__ import annotations

import csv
import json
import zipfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families import registry
from skillgym_builder.families.ledger_reconcile import (
    CARD_BOOK,
    LedgerReconcileFamily,
    category_limits,
    receipt_threshold,
    stage_probabilities,
)
from skillgym_builder.families.seeds import seed_card
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
)

HARD = {"record_count": 40, "noise_level": 0.4, "distractor_files": 1, "multi_step": 1, "error_recovery": 1,
        "long_horizon": 2}
FIXTURE = "bookkeeping-close"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for(FIXTURE, "accounting", category="business")
    return build(LedgerReconcileFamily(), card, HARD, tmp_path_factory.mktemp("ledger"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_fits_served_subcategories_and_finance_text_but_not_unrelated_skills() -> None:
    family = LedgerReconcileFamily()
    for sub in ("accounting", "financial-analysis", "sales-crm"):
        fit = family.suitability(card_for(FIXTURE, sub, category="business"))
        assert fit.fits and fit.code == "subcategory" and fit.strength == 2
    by_terms = family.suitability(card_for(FIXTURE, "project-management", category="business"))
    assert by_terms.fits and by_terms.code == "terms"
    unrelated = family.suitability(card_for("config-layers", "version-control", category="development"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served"


@pytest.mark.parametrize("skill", [FIXTURE, "seed"])
def test_skill_facts_are_read_alike_by_the_builder_and_the_solution(skill: str) -> None:
    card = seed_card(LedgerReconcileFamily().spec) if skill == "seed" else card_for(skill, None)
    namespace = solution_helper("ledger-reconcile", "ledgerfacts.py", card.root / "SKILL.md")  # as solutions import it
    for reader in (receipt_threshold, category_limits, stage_probabilities):
        fact = reader(card)
        assert fact is not None, reader.__name__
        assert namespace[reader.__name__]() == fact.value
    if skill == FIXTURE:
        threshold, stages = receipt_threshold(card), stage_probabilities(card)
        assert threshold is not None and threshold.value == 30
        assert stages is not None and isinstance(stages.value, dict)
        assert set(stages.value) == {"Lead", "Qualified", "Proposal sent", "Verbal yes"}


def _instance(knobs: dict[str, float]) -> Any:
    return LedgerReconcileFamily().instantiate(card_for(FIXTURE, "accounting"), 5, knobs)


def test_each_knob_changes_the_instance() -> None:
    base = _instance({})
    expected = json.loads(base.tests["expected.json"])
    assert not expected["reconciliation"]["duplicate_bank"] and not base.render_jobs
    assert _instance({"record_count": 120}).params["entries"] == 120 > base.params["entries"]
    noisy = _instance({"noise_level": 0.4})
    assert noisy.workspace["bank/operating_statement.csv"].startswith(b"bank_id,date,description,debit,credit")
    assert json.loads(noisy.tests["expected.json"])["reconciliation"]["adjustments"]
    assert any("archive/" in path for path in _instance({"distractor_files": 1}).workspace)
    fx = _instance({"multi_step": 1})
    assert "rates/fx_rates.csv" in fx.workspace and b",EUR" in fx.workspace["ledger/general_ledger.csv"] + \
        fx.workspace["expenses/claims.csv"]
    broken = json.loads(_instance({"error_recovery": 1}).tests["expected.json"])
    assert broken["reconciliation"]["duplicate_bank"] and any(r == "duplicate_claim" for _, r in broken["violations"])
    assert [job.produces for job in _instance({"long_horizon": 2}).render_jobs] == [(CARD_BOOK,)]


def test_without_skill_facts_the_instruction_states_the_policy(tmp_path: Path) -> None:
    plain = tmp_path / "skill"
    plain.mkdir()
    (plain / "SKILL.md").write_text("---\nname: plain-books\ndescription: Reconcile bank statements.\n---\n\n"
                                    "# Plain books\n\nReconcile the ledger with the bank statement every month.\n")
    output = LedgerReconcileFamily().instantiate(card_for("plain-books", "accounting", folder=plain), 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "($75)" in output.instruction and "Meals $75" in output.instruction and "Negotiation 75%" in output.instruction


def test_the_family_is_registered() -> None:
    assert registry().get("ledger-reconcile").spec.category == "business"


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    protected = {p.path for p in built.metadata.protected_inputs}
    assert {"ledger/general_ledger.csv", "bank/operating_statement.csv", CARD_BOOK, "crm/pipeline.csv"} <= protected


def test_card_statement_is_a_real_workbook(built: BuiltTask) -> None:
    with zipfile.ZipFile(BytesIO((built.task.workspace / CARD_BOOK).read_bytes())) as book:
        assert 'name="Transactions"' in book.read("xl/workbook.xml").decode()


def test_pandas_reference_and_stdlib_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/stdlib-decimal.sh")
    assert ok and built.verify(alternative).passed


def test_skill_is_needed_and_the_hidden_skill_run_fails(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert set(dependence["facts"]) == {"receipt_threshold", "category_limits", "stage_probabilities"}
    assert "`bookkeeping-close` skill" in built.task.instruction() and "$30" not in built.task.instruction()


def _near_miss_matched(value: dict[str, Any]) -> None:
    ledger_id, bank_id = value["unmatched_ledger"].pop(0), value["unmatched_bank"].pop(0)
    value["matched"].append({"ledger_id": ledger_id, "bank_id": bank_id})


def _duplicates_left_unmatched(value: dict[str, Any]) -> None:
    value["unmatched_bank"] += value.pop("duplicate_bank")
    value["duplicate_bank"] = []


def _difference_sign_flipped(value: dict[str, Any]) -> None:
    for adjustment in value["adjustments"]:
        adjustment["difference"] = -adjustment["difference"]


def _receipts_not_checked(value: dict[str, Any]) -> None:
    value["violations"] = [v for v in value["violations"] if v["rule"] != "missing_receipt"]


def _archive_included(workspace: Path) -> None:
    with (workspace / "bank/archive/operating_statement_prior_month.csv").open() as handle:
        old = [row["bank_id"] for row in csv.DictReader(handle)]
    rewrite_json("out/reconciliation.json", lambda v: v["unmatched_bank"].extend(old))(workspace)


def _won_counted_as_pipeline(value: dict[str, Any]) -> None:
    value["weighted_pipeline"] = round(value["weighted_pipeline"] + value["closed_won_total"], 2)


@pytest.mark.parametrize(("name", "edit"), [
    ("a near miss outside the tolerance matched", rewrite_json("out/reconciliation.json", _near_miss_matched)),
    ("duplicate postings left as unmatched lines", rewrite_json("out/reconciliation.json", _duplicates_left_unmatched)),
    ("adjustments as ledger minus bank", rewrite_json("out/reconciliation.json", _difference_sign_flipped)),
    ("last month's statement reconciled too", _archive_included),
    ("receipts never checked", rewrite_json("out/policy.json", _receipts_not_checked)),
    ("closed-won deals weighted into the pipeline", rewrite_json("out/metrics.json", _won_counted_as_pipeline)),
    ("win rate as a percentage", rewrite_json("out/metrics.json", lambda v: v.update(win_rate=v["win_rate"] * 100))),
    ("flagged claims approved", rewrite_json("out/metrics.json", lambda v: v.update(approved_claims_total=v["claims_total"]))),
    ("a metric as text", rewrite_json("out/metrics.json", lambda v: v.update(claims_total=str(v["claims_total"])))),
])
def test_wrong_but_plausible_results_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    assert not built.verify_edited(solved, edit).passed, name


def test_reordered_and_reformatted_results_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reorder(workspace: Path) -> None:
        value = read_json(workspace, "out/reconciliation.json")
        for key in value:
            value[key].reverse()
        (workspace / "out/reconciliation.json").write_text(json.dumps(value))

    assert built.verify_edited(solved, reorder).passed


def test_a_changed_ledger_is_tampering(built: BuiltTask, solved: Path) -> None:
    def tamper(workspace: Path) -> None:
        path = workspace / "ledger/general_ledger.csv"
        path.write_text(path.read_text() + "GL-9999,2025-01-01,Operating,Plug,Plug,0.00,USD\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "ledger-reconcile")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "ledger-reconcile")
