"""document-extract: invoices, statements or delivery reports rendered as real PDFs (reportlab)
and Word files (python-docx) in the sandbox; fields, multi-page tables, totals and metadata
extracted into JSON and CSV; the skill's date convention makes the skill necessary."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.document_extract import DocumentExtractFamily
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
)

KNOBS = {"record_count": 60, "noise_level": 1.0, "distractor_files": 2, "multi_step": 1, "error_recovery": 1,
         "long_horizon": 3}
FIXTURE = "invoice-pdf-tables"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for(FIXTURE, "pdf-processing")
    return build(DocumentExtractFamily(), card, KNOBS, tmp_path_factory.mktemp("documents"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


@pytest.fixture(scope="module")
def expected(built: BuiltTask) -> dict[str, Any]:
    return json.loads((built.task.tests / "expected.json").read_text())


def test_fits_pdf_skills_and_says_why_others_do_not() -> None:
    family = DocumentExtractFamily()
    assert family.suitability(card_for(FIXTURE, "pdf-processing")).code == "subcategory"
    by_package = card_for("tdd-workflow", "task-planning", runtime={"dependencies": {"imported": ["pdfplumber"]}})
    assert family.suitability(by_package).code == "dependencies"
    unrelated = family.suitability(card_for("tdd-workflow", "task-planning", category="productivity"))
    assert not unrelated.fits and unrelated.code == "subcategory_not_served" and "task-planning" in unrelated.reason
    offline = family.suitability(card_for(FIXTURE, "pdf-processing", runtime={"network": {"required": True}}))
    assert (offline.fits, offline.code) == (False, "needs_network")


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask, expected: dict[str, Any]) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    protected = {p.path for p in built.metadata.protected_inputs}
    assert set(expected["documents"]) | set(expected["skipped"]) | set(expected["unreadable"]) == protected


def test_documents_are_real_pdfs_and_word_files_with_multi_page_tables(built: BuiltTask, expected: dict[str, Any]) -> None:
    folder = built.task.workspace / "documents"
    pdfs, words = sorted(folder.glob("*.pdf")), sorted(folder.glob("*.docx"))
    assert words and all(w.read_bytes()[:2] == b"PK" for w in words)
    assert sum(p.read_bytes().startswith(b"%PDF-") for p in pdfs) == len(pdfs) - 1  # one failed download
    assert max(d["pages"] or 0 for d in expected["documents"].values()) > 1
    assert len(expected["skipped"]) == 2 and len(expected["unreadable"]) == 1


def test_pdfplumber_reference_and_pdfminer_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/pdfminer-layout.sh")
    assert ok and built.verify(alternative).passed


def test_the_date_convention_comes_from_the_skill(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert dependence["facts"] == ["date_format"]
    assert "prescribes" in built.task.instruction() and "YYYY/MM/DD" not in built.task.instruction()
    ok, workspace = built.solve(with_skill=False)
    assert not ok and not built.verify(workspace).passed


def test_without_a_date_convention_nothing_is_claimed(tmp_path: Path) -> None:
    plain = tmp_path / "skill"
    plain.mkdir()
    text = (card_for(FIXTURE, None).root / "SKILL.md").read_text()
    (plain / "SKILL.md").write_text(text.replace("- Dates in the exported data are written as `YYYY/MM/DD`, never as "
                                                 "the document shows them.\n", ""))
    output = DocumentExtractFamily().instantiate(card_for("plain-pdf", "pdf-processing", folder=plain), 0, {})
    assert not output.metadata["skill_claim"]["claimed"]
    assert "`YYYY-MM-DD`" in output.instruction


@pytest.mark.parametrize(("imports", "formats"), [
    ("from docx import Document\n", {"docx"}),
    ("import pdfplumber\nfrom docx import Document\n", {"docx", "pdf"}),
    ("import pdfplumber\n", {"pdf"}),
])
def test_an_instance_ships_the_files_the_skills_tool_handles(tmp_path: Path, imports: str, formats: set[str]) -> None:
    """A Word skill gets Word files even at the easiest level (no mixing knob), a PDF skill PDFs."""
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: office-docs\ndescription: Extract invoice fields and tables.\n---\n"
                                    f"# Invoices\n\n```python\n{imports}```\n")
    card = card_for("office-docs", "pdf-processing", folder=skill)
    output = DocumentExtractFamily().instantiate(card, 0, {"long_horizon": 2, "multi_step": 0})
    assert {d["format"] for d in output.render_jobs[0].params["documents"]} == formats


def _shape(knobs: dict[str, float]) -> dict[str, Any]:
    output = DocumentExtractFamily().instantiate(card_for(FIXTURE, "pdf-processing"), 3, knobs)
    documents = output.render_jobs[0].params["documents"]
    return {"files": len(documents), "words": sum(d["format"] == "docx" for d in documents),
            "stamps": sorted(d["stamp"] for d in documents if d["stamp"]),
            "rows": max(len(d["rows"]) for d in documents), "running": any(d["running"] for d in documents),
            "workspace": len(output.workspace)}


def test_every_knob_changes_the_instance() -> None:
    base = _shape({})
    assert base == {"files": 1, "words": 0, "stamps": [], "rows": base["rows"], "running": False, "workspace": 0}
    assert _shape({"record_count": 150})["rows"] > 100 >= base["rows"]
    assert _shape({"noise_level": 0.5})["running"]
    assert _shape({"distractor_files": 2})["stamps"] == ["DRAFT", "VOID"]
    assert _shape({"multi_step": 1})["words"] == 1
    assert _shape({"error_recovery": 1})["workspace"] == 1
    assert _shape({"long_horizon": 6})["files"] == 6


def _column(expected: dict[str, Any], kind: str) -> str:
    return next(key for key, value in expected["columns"].items() if value == kind)


def _pdf(expected: dict[str, Any]) -> str:
    return next(path for path, doc in expected["documents"].items() if doc["pages"] and doc["pages"] > 1)


def _iso_dates(expected: dict[str, Any]) -> Any:
    def change(value: dict[str, Any]) -> None:
        for doc in value["documents"].values():
            for key, text in doc["fields"].items():
                if key.endswith("date"):
                    doc["fields"][key] = text.replace("/", "-")
            for row in doc["rows"]:
                for key, kind in expected["columns"].items():
                    if kind == "date":
                        row[key] = row[key].replace("/", "-")
    return change


def _repeated_header_kept(expected: dict[str, Any]) -> Any:
    def change(value: dict[str, Any]) -> None:
        rows = value["documents"][_pdf(expected)]["rows"]
        rows.insert(18, dict(rows[18]))  # the first row of page two read twice
    return change


def _first_page_only(expected: dict[str, Any]) -> Any:
    def change(value: dict[str, Any]) -> None:
        doc = value["documents"][_pdf(expected)]
        doc["rows"] = doc["rows"][:18]
        doc["total"] = round(sum(row[expected["total_of"]] for row in doc["rows"]), 2)
    return change


def _void_copy_extracted(expected: dict[str, Any]) -> Any:
    def change(value: dict[str, Any]) -> None:
        stamped = value["skipped"].pop()
        value["documents"][stamped] = dict(next(iter(value["documents"].values())))
    return change


def _amounts_as_printed(expected: dict[str, Any]) -> Any:
    def change(value: dict[str, Any]) -> None:
        money = expected["total_of"]
        for doc in value["documents"].values():
            for row in doc["rows"]:
                row[money] = f"${row[money]:,.2f}"
    return change


def _heading_for_title(value: dict[str, Any]) -> None:
    for doc in value["documents"].values():
        doc["title"] = doc["title"].split(" - ")[-1].rsplit(" ", 1)[0].upper()


def _word_page_count(value: dict[str, Any]) -> None:
    for path, doc in value["documents"].items():
        if path.endswith(".docx"):
            doc["pages"] = 1


def _write_csv(path: Path, rows: list[list[str]]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())


def _drop_csv_document(workspace: Path) -> None:
    path = workspace / "out" / "rows.csv"
    rows = list(csv.reader(io.StringIO(path.read_text())))
    last = rows[-1][rows[0].index("document")]
    _write_csv(path, [row for row in rows if row[rows[0].index("document")] != last])


WRONG = [
    ("dates written as ISO instead of the skill's format", lambda e: rewrite_json("out/documents.json", _iso_dates(e))),
    ("a repeated header row's neighbour read twice", lambda e: rewrite_json("out/documents.json", _repeated_header_kept(e))),
    ("only the first page of a table", lambda e: rewrite_json("out/documents.json", _first_page_only(e))),
    ("a VOID copy extracted", lambda e: rewrite_json("out/documents.json", _void_copy_extracted(e))),
    ("amounts kept as printed text", lambda e: rewrite_json("out/documents.json", _amounts_as_printed(e))),
    ("the visible heading taken for the metadata title", lambda e: rewrite_json("out/documents.json", _heading_for_title)),
    ("a page count for a Word file", lambda e: rewrite_json("out/documents.json", _word_page_count)),
    ("the failed download not reported", lambda e: rewrite_json("out/documents.json", lambda v: v["unreadable"].clear())),
    ("a document's rows missing from the CSV", lambda e: _drop_csv_document),
]


@pytest.mark.parametrize(("name", "make"), WRONG, ids=[name for name, _ in WRONG])
def test_wrong_but_plausible_extractions_are_rejected(built: BuiltTask, solved: Path, expected: dict[str, Any],
                                                      name: str, make: Any) -> None:
    assert not built.verify_edited(solved, make(expected)).passed, name


def test_reordered_csv_and_reformatted_json_are_accepted(built: BuiltTask, solved: Path) -> None:
    def reformat(workspace: Path) -> None:
        path = workspace / "out" / "rows.csv"
        rows = list(csv.reader(io.StringIO(path.read_text())))
        body = [row[::-1] for row in rows[1:]][::-1]
        _write_csv(path, [rows[0][::-1], *body])
        value = read_json(workspace, "out/documents.json")
        for doc in value["documents"].values():
            doc["pages"] = float(doc["pages"]) if doc["pages"] else None
        (workspace / "out" / "documents.json").write_text(json.dumps(value, separators=(",", ":")))

    assert built.verify_edited(solved, reformat).passed


def test_a_changed_document_is_tampering(built: BuiltTask, solved: Path) -> None:
    protected = built.metadata.protected_inputs[0].path

    def tamper(workspace: Path) -> None:
        (workspace / protected).write_bytes((workspace / protected).read_bytes() + b"\n%%EOF\n")

    outcome = built.verify_edited(solved, tamper)
    assert not outcome.passed and outcome.failure_type == "tampered_inputs"


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "document-extract")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "document-extract")


@pytest.mark.slow
@pytest.mark.parametrize("check", ["documents:schema", "documents:files", "documents:metadata", "documents:fields"])
def test_a_check_inside_the_documents_item_that_accepts_anything_is_named(tmp_path: Path, env_provider: LocalVenvProvider,
                                                                          check: str) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "document-extract", check)
