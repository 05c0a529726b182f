"""The ingestion pipeline: sources in, one SkillRecord per skill folder out, events for the accepted."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core import keys
from skillgym_core.contracts.events import SkillIngested
from skillgym_core.contracts.skill import SkillRecord
from skillgym_core.store.base import Store

from skillgym_ingest.decide import Decider
from skillgym_ingest.executor import AnalysisPool
from skillgym_ingest.filters import INCONSISTENT
from skillgym_ingest.llm import LLMAnnotator
from skillgym_ingest.progress import ProgressReporter
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.sources import open_sources
from skillgym_ingest.summary import SkillSummary

RecordSink = Callable[[SkillRecord], None]
JsonSink = Callable[[bytes], None]
EventSink = Callable[[SkillIngested], None]


@dataclass
class IngestResult:
    records: list[SkillRecord] = field(default_factory=list)
    funnel: dict[str, int] = field(default_factory=dict)
    events: list[SkillIngested] = field(default_factory=list)
    llm_agreement: dict[str, float] = field(default_factory=dict)

    @property
    def accepted(self) -> list[SkillRecord]:
        return [r for r in self.records if r.accepted]


def ingest(
    sources: Sequence[Path | str],
    *,
    settings: IngestSettings | None = None,
    store: Store | None = None,
    progress: bool = False,
    on_record: RecordSink | None = None,
    on_event: EventSink | None = None,
    keep: bool = True,
    on_record_json: JsonSink | None = None,
) -> IngestResult:
    """Ingest every skill folder found in ``sources``.

    Records and events are passed to ``on_record``/``on_event`` as they are decided, and each
    record's JSON line (no trailing newline) to ``on_record_json``; with ``keep=False`` they are
    not also collected, so memory stays flat for large crawls. :class:`SkillRecord` objects are
    only built when something asks for them (``keep``, ``on_record``, a store or the LLM
    annotator): the JSON-only path never rebuilds a model."""
    settings = settings or IngestSettings()
    result = IngestResult()
    annotator = LLMAnnotator(settings) if settings.llm_annotate else None
    pack = store is not None and settings.write_store
    want_records = keep or on_record is not None
    want_events = keep or on_event is not None or pack
    with ProgressReporter(enabled=progress) as reporter, AnalysisPool(settings) as pool, Decider(settings) as decider:
        for unit_batch in open_sources(sources, settings, store):
            with unit_batch as units:
                for chunk in pool.map(units, pack=pack):
                    for skill in chunk.skills:
                        verdict = decider.decide(skill, chunk.dedup_inputs(skill))
                        record = None
                        if annotator is not None and not verdict.reasons:
                            decider.count("llm_annotated")
                            record = skill.record(verdict)
                            if not annotator.annotate(record):
                                verdict.reasons.append(INCONSISTENT)
                        decider.settle(verdict)
                        if record is not None:
                            record.reasons, record.accepted = verdict.reasons, verdict.accepted
                            line = record.model_dump_json().encode()
                        else:
                            line = skill.json_line(verdict)
                            if want_records:
                                record = SkillRecord.model_validate_json(line)
                        if verdict.accepted and want_events:
                            event = _publish(skill, line, store, settings)
                            if on_event:
                                on_event(event)
                            if keep:
                                result.events.append(event)
                        if on_record_json:
                            on_record_json(line)
                        if on_record and record is not None:
                            on_record(record)
                        if keep and record is not None:
                            result.records.append(record)
                        reporter.advance(verdict.accepted)
        result.funnel = decider.funnel()
    if annotator is not None:
        result.llm_agreement = annotator.agreement()
        annotator.close()
    return result


def _publish(skill: SkillSummary, record_json: bytes, store: Store | None, settings: IngestSettings) -> SkillIngested:
    """Store the accepted skill's files and its record (the same JSON as its ``skills.jsonl``
    line) and return its event."""
    record_key = keys.skill_record(skill.skill_id)
    files_key = keys.skill_files(skill.skill_id)
    if store is not None and settings.write_store:
        packed = skill.packed
        if packed is None and skill.root is not None:
            from skillgym_core.archive import pack_dir

            packed = pack_dir(skill.root)
        if packed is not None:
            store.put_bytes(files_key, packed, "application/gzip")
        store.put_bytes(record_key, record_json, "application/json")
    return SkillIngested(
        skill_id=skill.skill_id, name=skill.name, record_key=record_key, files_key=files_key, category=skill.category,
    )


def write_outputs(result: IngestResult, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with RecordWriter(out_dir) as writer:
        for record in result.records:
            writer.write(record)
    write_funnel(result.funnel, out_dir)
    if result.llm_agreement:
        (out_dir / "llm_agreement.json").write_text(json.dumps(result.llm_agreement, indent=2, sort_keys=True))


def write_funnel(funnel: dict[str, int], out_dir: Path) -> None:
    (out_dir / "funnel.json").write_text(json.dumps(funnel, indent=2, sort_keys=True) + "\n")


class RecordWriter:
    """Appends records to ``skills.jsonl`` one line each (usable as ``on_record`` or ``on_record_json``)."""

    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.path = out_dir / "skills.jsonl"
        self._handle = self.path.open("wb", buffering=1 << 20)

    def write(self, record: SkillRecord) -> None:
        self.write_json(record.model_dump_json().encode())

    def write_json(self, line: bytes) -> None:
        self._handle.write(line)
        self._handle.write(b"\n")

    __call__ = write

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
