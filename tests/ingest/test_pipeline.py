from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from skillgym_core import keys
from skillgym_core.contracts.skill import SkillRecord
from skillgym_core.store.local import LocalStore
from skillgym_ingest.pipeline import ingest, write_outputs
from skillgym_ingest.settings import IngestSettings

from tests.ingest.skillkit import write_skill


def _settings(**overrides: object) -> IngestSettings:
    return IngestSettings(workers=1, **overrides)  # type: ignore[arg-type]


def test_accepted_skill_is_stored_with_record_and_archive(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_skill(corpus)
    store = LocalStore(tmp_path / "store")
    result = ingest([corpus], settings=_settings(), store=store)

    assert len(result.records) == 1
    record = result.records[0]
    assert record.accepted, record.reasons
    assert record.name == "csv-report"
    assert record.skill_id.startswith("skill-")
    [event] = result.events
    assert event.skill_id == record.skill_id
    assert event.record_key == keys.skill_record(record.skill_id)
    assert event.files_key == keys.skill_files(record.skill_id)
    stored = SkillRecord.model_validate_json(store.get_bytes(event.record_key))
    assert stored.skill_id == record.skill_id and stored.accepted
    with tarfile.open(fileobj=io.BytesIO(store.get_bytes(event.files_key))) as tar:
        names = tar.getnames()
    assert "SKILL.md" in names and "scripts/summarize.py" in names
    assert result.funnel["found"] == 1 and result.funnel["accepted"] == 1


def test_skill_id_is_content_derived_and_stable(tmp_path: Path) -> None:
    write_skill(tmp_path / "a")
    write_skill(tmp_path / "b")
    first = ingest([tmp_path / "a"], settings=_settings()).records[0]
    second = ingest([tmp_path / "b"], settings=_settings()).records[0]
    assert first.skill_id == second.skill_id
    (tmp_path / "b" / "csv-report" / "SKILL.md").write_text("---\nname: csv-report\ndescription: other\n---\nx")
    third = ingest([tmp_path / "b"], settings=_settings()).records[0]
    assert third.skill_id != first.skill_id


def test_every_folder_gets_a_record_and_rejections_name_reasons(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_skill(corpus, "csv-report")
    write_skill(corpus / "nested" / "deeper", "copy-of-csv", name="copy-of-csv")
    write_skill(
        corpus,
        "rapport-csv",
        description="Résumer un export CSV en rapport Markdown avec des totaux par colonne.",
        body="# Rapport\n\nLisez le fichier d'entrée, calculez les totaux de chaque colonne puis écrivez "
        "le rapport dans un fichier Markdown dans le répertoire courant.\n",
    )
    write_skill(corpus, "blank", description="Does nothing at all here.", body="\n\n")
    result = ingest([corpus, tmp_path / "missing"], settings=_settings())
    by_name = {r.name: r for r in result.records}
    assert set(by_name) == {"csv-report", "copy-of-csv", "rapport-csv", "blank", "missing"}
    assert by_name["csv-report"].accepted
    assert "duplicate" in by_name["copy-of-csv"].reasons
    assert by_name["copy-of-csv"].duplicate_of == by_name["csv-report"].skill_id
    assert "not_english" in by_name["rapport-csv"].reasons
    assert "empty" in by_name["blank"].reasons
    assert by_name["missing"].reasons == ["source_unreadable"]
    assert [e.skill_id for e in result.events] == [by_name["csv-report"].skill_id]
    assert result.funnel["rejected:duplicate"] == 1


def test_write_outputs_writes_jsonl_and_funnel(tmp_path: Path) -> None:
    write_skill(tmp_path / "corpus")
    result = ingest([tmp_path / "corpus"], settings=_settings())
    write_outputs(result, tmp_path / "out")
    lines = (tmp_path / "out" / "skills.jsonl").read_text().splitlines()
    assert [SkillRecord.model_validate_json(line).skill_id for line in lines] == [result.records[0].skill_id]
    assert json.loads((tmp_path / "out" / "funnel.json").read_text()) == result.funnel


def test_worker_processes_give_the_same_records_in_the_same_order(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for index in range(40):
        write_skill(corpus, f"skill-{index:02d}", description=f"Summarize CSV export number {index} into a report.")
    serial = ingest([corpus], settings=_settings())
    parallel = ingest([corpus], settings=IngestSettings(workers=2, chunk_size=4))
    assert [r.model_dump() for r in serial.records] == [r.model_dump() for r in parallel.records]
