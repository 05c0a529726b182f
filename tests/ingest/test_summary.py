"""The JSON the main process writes without rebuilding records is what pydantic would write."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.contracts.skill import SkillRecord
from skillgym_ingest.analyze import analyze_path
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.summary import TAIL_SPLIT_OK, SkillSummary, Verdict

from tests.ingest.skillkit import write_skill

VERDICTS = [
    Verdict(reasons=[], duplicate_cluster="skill-0011223344556677", accepted=True),
    Verdict(reasons=["duplicate"], duplicate_of="skill-aa", duplicate_cluster="skill-aa", duplicate_kind="near",
            duplicate_similarity=round(83 / 128, 4)),
    Verdict(reasons=["duplicate"], duplicate_of="skill-bb", duplicate_cluster="skill-bb", duplicate_kind="exact",
            duplicate_similarity=1.0),
    Verdict(reasons=["not_english", "empty", "weird \"reason\" é"]),
]


@pytest.mark.parametrize("verdict", VERDICTS)
def test_json_line_equals_pydantic_dump(tmp_path: Path, verdict: Verdict) -> None:
    assert TAIL_SPLIT_OK
    root = write_skill(tmp_path, description="Summarize a CSV export — with ünïcode and \"quotes\".")
    record = analyze_path(root, str(root), IngestSettings(workers=1)).record
    summary = SkillSummary.of(record, root, None, -1)
    expected = record.model_copy(update={
        "duplicate_of": verdict.duplicate_of, "duplicate_cluster": verdict.duplicate_cluster,
        "duplicate_kind": verdict.duplicate_kind, "duplicate_similarity": verdict.duplicate_similarity,
        "accepted": verdict.accepted, "reasons": verdict.reasons,
    })
    assert summary.json_line(verdict) == expected.model_dump_json().encode()
    assert summary.record(verdict) == SkillRecord.model_validate_json(expected.model_dump_json())


def test_every_similarity_value_is_written_like_pydantic() -> None:
    record = SkillRecord(skill_id="skill-x", name="x", source="s", content_hash="")
    summary = SkillSummary.of(record, None, None, -1)
    for matches in range(129):
        verdict = Verdict(reasons=["duplicate"], duplicate_similarity=round(matches / 128, 4))
        expected = record.model_copy(update={"duplicate_similarity": verdict.duplicate_similarity,
                                             "reasons": ["duplicate"]})
        assert summary.json_line(verdict) == expected.model_dump_json().encode()
