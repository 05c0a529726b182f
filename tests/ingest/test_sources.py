from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.store.local import LocalStore
from skillgym_ingest.cli import ingest_command
from skillgym_ingest.pipeline import ingest
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.taxonomy import load_taxonomy

from tests.ingest.skillkit import GOOD_BODY, GOOD_SCRIPT, write_skill

SETTINGS = IngestSettings(workers=1)


def test_git_checkout_source_carries_the_commit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(repo / "skills", "csv-report")
    git = repo / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text("0123456789abcdef0123456789abcdef01234567\n")
    [record] = ingest([repo], settings=SETTINGS).records
    assert record.source == f"git:{repo}@0123456789abcdef0123456789abcdef01234567/skills/csv-report"
    assert ".git" not in {f.path.split("/")[0] for f in record.files}


def test_store_prefix_source_with_folders_and_archives(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    md = f"---\nname: csv-report\ndescription: Summarize a CSV export into a Markdown report.\n---\n{GOOD_BODY}"
    store.put_bytes("crawl/2025/csv-report/SKILL.md", md.encode())
    store.put_bytes("crawl/2025/csv-report/scripts/summarize.py", GOOD_SCRIPT.encode())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("pdf-notes/SKILL.md", md.replace("csv-report", "pdf-notes").replace("CSV", "PDF"))
    store.put_bytes("crawl/2025/pdf-notes.zip", buffer.getvalue())
    store.put_bytes("other/ignored/SKILL.md", md.encode())
    records = ingest(["store://crawl/2025/"], settings=SETTINGS, store=store).records
    assert sorted(r.source for r in records) == [
        "store://crawl/2025/csv-report", "store://crawl/2025/pdf-notes.zip!/pdf-notes"]
    assert ingest(["store://crawl/2025/"], settings=SETTINGS).records[0].reasons == ["source_unreadable"]
    assert ingest(["store://nothing/"], settings=SETTINGS, store=store).records[0].reasons == ["no_skill_md"]


def test_an_archive_deeper_than_the_recursion_limit_is_extracted_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with zipfile.ZipFile(tmp_path / "deep.zip", "w") as archive:
        for depth in range(1, 1200):
            archive.writestr("d/" * depth, "")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    try:
        assert ingest([tmp_path / "deep.zip"], settings=SETTINGS).records[0].reasons == ["no_skill_md"]
        assert list(scratch.iterdir()) == []
    finally:  # what is left is deeper than pytest's own removal of tmp_path can recurse
        remove_tree(scratch)


def test_cli_streams_records_and_funnel(tmp_path: Path) -> None:
    write_skill(tmp_path / "corpus", "csv-report")
    write_skill(tmp_path / "corpus", "gpu-trainer", files={"scripts/t.py": "model.cuda()\n"},
                body=GOOD_BODY + "\nTrain the model.\n")
    store = LocalStore(tmp_path / "store")
    result = ingest_command([tmp_path / "corpus"], tmp_path / "out", store, settings=SETTINGS,
                            keep_records=False, progress=True)
    assert result.records == [] and result.funnel["found"] == 2
    lines = (tmp_path / "out" / "skills.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert json.loads((tmp_path / "out" / "funnel.json").read_text())["accepted"] == 1
    assert sum(1 for key in store.list("skills/") if key.endswith("record.json")) == 1


def test_default_taxonomy_shape_and_replacement(tmp_path: Path) -> None:
    taxonomy = load_taxonomy()
    assert len(taxonomy.categories) == 12 and len(taxonomy.subcategories) == 63
    custom = tmp_path / "tax.json"
    custom.write_text(json.dumps({"version": "x", "categories": [
        {"id": "finance", "subcategories": [{"id": "reports", "keywords": ["csv", "report", "totals"]}]},
        {"id": "other", "subcategories": [{"id": "misc", "keywords": ["kubernetes"]}]},
    ]}))
    write_skill(tmp_path / "corpus", "csv-report")
    [record] = ingest([tmp_path / "corpus"], settings=IngestSettings(workers=1, taxonomy_path=custom)).records
    assert (record.category, record.subcategory) == ("finance", "reports")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    try:
        load_taxonomy(bad)
    except Exception as exc:  # a typed error naming the file
        assert getattr(exc, "reason", "") == "taxonomy_invalid"
    else:
        raise AssertionError("a broken taxonomy must be refused")
