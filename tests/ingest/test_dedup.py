from __future__ import annotations

from pathlib import Path

import numpy as np
from skillgym_ingest.dedup import BucketTable, NearDuplicateIndex, jaccard, signature
from skillgym_ingest.pipeline import ingest
from skillgym_ingest.settings import IngestSettings

from tests.ingest.skillkit import write_skill

ORIGINAL = """# Invoice totals

Use this skill when the user asks to reconcile monthly invoices against the ledger export.

## Steps
1. Load the invoice spreadsheet from the working directory and normalise the vendor names.
2. Match every invoice to a ledger row by amount, date and vendor, allowing two days of drift.
3. Flag invoices that have no ledger match and ledger rows that have no invoice.
4. Write a reconciliation table to reconciliation.csv with one row per invoice and its status.
5. Summarise the unmatched totals per vendor at the end of the report in summary.md.
"""
REWORDED = """# Invoice totals

Use this skill whenever the user asks to reconcile monthly invoices against the ledger export.

## Steps
1. Load the invoice spreadsheet from the working folder and normalise all vendor names.
2. Match each invoice to a ledger row by amount, date and vendor, allowing two days of drift.
3. Flag invoices that have no ledger match and ledger rows that lack an invoice.
4. Write a reconciliation table to reconciliation.csv with one row per invoice and its status.
5. Summarise the unmatched totals per vendor at the end of the report in summary.md.
"""
UNRELATED = """# Slide deck

Turn a Markdown outline into a presentation with one slide per heading and speaker notes.

## Steps
1. Parse the outline headings and bullet lists.
2. Render each heading as a slide title and each bullet as a point.
"""
DESC = "Reconcile monthly invoices against a ledger export and report unmatched totals."


def test_reworded_pair_is_a_near_duplicate_in_the_pipeline(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_skill(corpus, "invoice-recon", description=DESC, body=ORIGINAL, files={})
    write_skill(corpus, "ledger-match", description=DESC, body=REWORDED, files={})
    write_skill(corpus, "slides", description="Turn a Markdown outline into slides.", body=UNRELATED, files={})
    records = {r.name: r for r in ingest([corpus], settings=IngestSettings(workers=1)).records}
    assert 0.5 <= jaccard(ORIGINAL, REWORDED, 3) < 1
    dup = records["ledger-match"]
    assert dup.duplicate_of == records["invoice-recon"].skill_id
    assert dup.duplicate_kind == "near" and dup.duplicate_similarity is not None and dup.duplicate_similarity >= 0.5
    assert dup.reasons == ["duplicate"]
    assert records["invoice-recon"].duplicate_cluster == records["invoice-recon"].skill_id
    assert records["slides"].duplicate_of is None and records["slides"].accepted


def test_formatting_only_copy_is_an_exact_duplicate(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_skill(corpus, "invoice-recon", description=DESC, body=ORIGINAL, files={})
    noisy = ORIGINAL.replace("\n", "   \r\n").replace("Use this skill", "USE  this skill")
    write_skill(corpus, "invoice-recon-copy", description=DESC, body=noisy, files={})
    records = {r.name: r for r in ingest([corpus], settings=IngestSettings(workers=1)).records}
    copy = records["invoice-recon-copy"]
    assert copy.duplicate_kind == "exact"
    assert copy.normalized_hash == records["invoice-recon"].normalized_hash
    assert copy.content_hash != records["invoice-recon"].content_hash


def test_signatures_are_deterministic_and_estimate_jaccard() -> None:
    settings = IngestSettings()
    a, b = signature(ORIGINAL, settings), signature(REWORDED, settings)
    assert np.array_equal(a, signature(ORIGINAL, settings))
    estimate = float(np.mean(a == b))
    assert abs(estimate - jaccard(ORIGINAL, REWORDED, 3)) < 0.15
    assert float(np.mean(a == signature(UNRELATED, settings))) < 0.2


def test_index_finds_near_and_skips_unrelated() -> None:
    settings = IngestSettings()
    index = NearDuplicateIndex(settings)
    assert index.query_or_add("a", signature(ORIGINAL, settings)) is None
    assert index.query_or_add("c", signature(UNRELATED, settings)) is None
    found = index.query_or_add("b", signature(REWORDED, settings))
    assert found is not None and found[0] == "a"


def test_bucket_table_grows_and_keeps_first_value() -> None:
    table = BucketTable(capacity=8)
    keys = np.arange(1, 200, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)
    for value, key in enumerate(keys.tolist()):
        table.insert(np.array([key], dtype=np.uint64), value)
    table.insert(keys[:1], 999)
    assert len(table) == len(keys)
    assert table.lookup(keys).tolist() == list(range(len(keys)))
    assert table.lookup(np.array([12345 | 1], dtype=np.uint64)).tolist() == [-1]
