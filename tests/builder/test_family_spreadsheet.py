"""spreadsheet-extract: expense workbooks made with openpyxl in the sandbox; planted fields, a
messy table, error cells, decoy sheets; extracted into JSON."""

from __future__ import annotations

import zipfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.spreadsheet import CATEGORIES, SpreadsheetExtractFamily
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    rewrite_json,
)

KNOBS = {"record_count": 40, "noise_level": 0.4, "multi_step": 1, "error_recovery": 1, "distractor_files": 1,
         "long_horizon": 2}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("expense-workbooks", "spreadsheets")
    return build(SpreadsheetExtractFamily(), card, KNOBS, tmp_path_factory.mktemp("sheets"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_workbooks_are_real_xlsx_files_with_the_planted_sheets(built: BuiltTask) -> None:
    book = built.task.workspace / "reports" / "expenses.xlsx"
    with zipfile.ZipFile(BytesIO(book.read_bytes())) as archive:
        workbook = archive.read("xl/workbook.xml").decode()
    assert all(f'name="{sheet}"' in workbook for sheet in ("Report", "Codes", "Archive 2024"))
    assert (built.task.workspace / "reports" / "previous" / "expenses_last_period.xlsx").is_file()


def test_rendering_is_deterministic(built: BuiltTask, tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    again = build(SpreadsheetExtractFamily(), card_for("expense-workbooks", "spreadsheets"), KNOBS, tmp_path,
                  env_provider)
    first = {p.relative_to(built.task.workspace): p.read_bytes() for p in built.task.workspace.rglob("*.xlsx")}
    second = {p.relative_to(again.task.workspace): p.read_bytes() for p in again.task.workspace.rglob("*.xlsx")}
    assert first == second


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert {p.path for p in built.metadata.protected_inputs} >= {"reports/expenses.xlsx", "reports/expenses_2.xlsx"}


def test_openpyxl_reference_and_raw_xml_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/workbook-xml.sh")
    assert ok and built.verify(alternative).passed


def test_no_dependence_is_claimed_without_a_skill_fact(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] is False and dependence["with_skill"]["passed"]


def _first(value: dict[str, Any]) -> dict[str, Any]:
    return value["reports"]["reports/expenses.xlsx"]


def _totals_row_as_item(value: dict[str, Any]) -> None:
    report = _first(value)
    report["items"].append({"date": report["period_end"], "category": "Other", "description": "Total",
                            "amount": report["total"]})
    report["totals_by_category"]["Other"] = round(report["totals_by_category"].get("Other", 0) + report["total"], 2)
    report["total"] = round(report["total"] * 2, 2)


def _error_rows_as_zero(value: dict[str, Any]) -> None:
    report = _first(value)
    for _ in report["skipped_rows"]:
        report["items"].append({"date": report["period_start"], "category": "Other", "description": "?", "amount": 0})
    report["skipped_rows"] = []


def _codes_kept(value: dict[str, Any]) -> None:
    names = {name: code for code, name in CATEGORIES.items()}
    report = _first(value)
    for item in report["items"]:
        item["category"] = names[item["category"]]
    report["totals_by_category"] = {names[k]: v for k, v in report["totals_by_category"].items()}


def _thousands_misread(value: dict[str, Any]) -> None:
    item = max(_first(value)["items"], key=lambda i: i["amount"])
    item["amount"] = round(item["amount"] / 1000, 2)


@pytest.mark.parametrize(("name", "change"), [
    ("the totals row read as an expense", _totals_row_as_item),
    ("error cells read as zero", _error_rows_as_zero),
    ("category codes left unresolved", _codes_kept),
    ("a text amount misread", _thousands_misread),
    ("a label taken for its value", lambda v: _first(v).update(employee="Employee:")),
    ("totals that do not add up", lambda v: _first(v).update(total=_first(v)["total"] + 1)),
    ("an Excel serial number as the date", lambda v: _first(v)["items"][0].update(date="45717")),
])
def test_wrong_but_plausible_extractions_are_rejected(built: BuiltTask, solved: Path, name: str, change: Any) -> None:
    assert not built.verify_edited(solved, rewrite_json("out/expenses.json", change)).passed, name


def test_items_in_any_order_are_accepted(built: BuiltTask, solved: Path) -> None:
    assert built.verify_edited(solved, rewrite_json("out/expenses.json", lambda v: _first(v)["items"].reverse())).passed


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "spreadsheet-extract")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "spreadsheet-extract")
