from __future__ import annotations

from pathlib import Path

from tests.ingest.skillkit import GOOD_BODY, analyze


def test_consistent_description_scores_high(tmp_path: Path) -> None:
    consistency = analyze(tmp_path).quality["description_consistency"]
    assert consistency.value["score"] >= 0.5
    assert "csv" in consistency.value["shared_terms"]
    assert consistency.evidence[0].rule == "quality.consistency.term_overlap"


def test_unrelated_description_scores_low_and_is_rejected(tmp_path: Path) -> None:
    record = analyze(tmp_path, description="Deploy Kubernetes clusters on bare metal with Terraform modules.")
    assert record.quality["description_consistency"].value["score"] < 0.2
    assert "inconsistent" in record.reasons


def test_requirement_clarity_signals(tmp_path: Path) -> None:
    clear = analyze(tmp_path / "a").quality["requirement_clarity"].value
    assert clear["signals"]["when_to_use"] and clear["signals"]["steps"] and clear["signals"]["workflow_heading"]
    vague = analyze(tmp_path / "b", body="Summarize CSV exports.\n", files={}).quality["requirement_clarity"].value
    assert vague["score"] < clear["score"]
    assert not vague["signals"]["steps"] and not vague["signals"]["substantial_body"]


def test_basic_attributes(tmp_path: Path) -> None:
    record = analyze(tmp_path, files={"scripts/summarize.py": "print(1)\n", "notes/extra.js": "x()\n"})
    basic = {key: value.value for key, value in record.basic.items()}
    assert basic["file_count"] == 3
    assert basic["folder_size"] == sum(f.size for f in record.files)
    assert basic["script_languages"] == {"javascript": 1, "python": 1}
    assert basic["language"]["language"] == "en"
    assert basic["package_completeness"]["complete"] is True


def test_missing_referenced_file_makes_package_incomplete(tmp_path: Path) -> None:
    body = GOOD_BODY + "\nSee [the reference](references/FORMS.md) for field names.\n"
    completeness = analyze(tmp_path, body=body).basic["package_completeness"]
    assert completeness.value["complete"] is False
    missing = [e for e in completeness.evidence if e.rule == "basic.reference_missing"]
    lines = (tmp_path / "csv-report" / "SKILL.md").read_text().split("\n")
    assert missing[0].excerpt == "references/FORMS.md"
    assert "references/FORMS.md" in lines[missing[0].line - 1]


def test_taxonomy_class_with_confidence_and_evidence(tmp_path: Path) -> None:
    record = analyze(
        tmp_path, "pdf-forms", description="Fill PDF forms and extract text from PDF pages.",
        body="# PDF forms\n\nUse pdfplumber to extract pages of the pdf, then fill the form fields.\n",
    )
    assert (record.category, record.subcategory) == ("documents", "pdf-processing")
    assert record.category_confidence is not None and 0 < record.category_confidence <= 1
    assert "pdf" in (record.category_evidence[0].excerpt or "")
