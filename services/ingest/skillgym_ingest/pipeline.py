"""The ingestion pipeline: sources in, one SkillRecord per skill folder out, events for the accepted."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core import keys
from skillgym_core.contracts.events import SkillIngested
from skillgym_core.contracts.skill import SkillRecord
from skillgym_core.store.base import Store, put_json

from skillgym_ingest.decide import Decider
from skillgym_ingest.executor import AnalysisPool
from skillgym_ingest.llm import LLMAnnotator
from skillgym_ingest.progress import ProgressReporter
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.sources import open_sources

RecordSink = Callable[[SkillRecord], None]
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
) -> IngestResult:
    """Ingest every skill folder found in ``sources``.

    Records and events are passed to ``on_record``/``on_event`` as they are decided; with
    ``keep=False`` they are not also collected, so memory stays flat for large crawls."""
    settings = settings or IngestSettings()
    result = IngestResult()
    decider = Decider(settings)
    annotator = LLMAnnotator(settings) if settings.llm_annotate else None
    pack = store is not None and settings.write_store
    with ProgressReporter(enabled=progress) as reporter, AnalysisPool(settings) as pool:
        for unit_batch in open_sources(sources, settings, store):
            with unit_batch as units:
                for analysis, packed in pool.map(units, pack=pack):
                    record = decider.decide(analysis, annotator)
                    if record.accepted:
                        event = _publish(record, packed, analysis.root, store, settings)
                        if on_event:
                            on_event(event)
                        if keep:
                            result.events.append(event)
                    if on_record:
                        on_record(record)
                    if keep:
                        result.records.append(record)
                    reporter.advance(record)
    result.funnel = decider.funnel()
    if annotator is not None:
        result.llm_agreement = annotator.agreement()
        annotator.close()
    return result


def _publish(
    record: SkillRecord, packed: bytes | None, root: Path | None, store: Store | None, settings: IngestSettings
) -> SkillIngested:
    record_key = keys.skill_record(record.skill_id)
    files_key = keys.skill_files(record.skill_id)
    if store is not None and settings.write_store:
        if packed is None and root is not None:
            from skillgym_core.archive import pack_dir

            packed = pack_dir(root)
        if packed is not None:
            store.put_bytes(files_key, packed, "application/gzip")
        put_json(store, record_key, record.model_dump(mode="json"))
    return SkillIngested(
        skill_id=record.skill_id, name=record.name, record_key=record_key, files_key=files_key,
        category=record.category,
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
    """Appends records to ``skills.jsonl`` one line each (usable as ``on_record``)."""

    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.path = out_dir / "skills.jsonl"
        self._handle = self.path.open("w", encoding="utf-8")

    def write(self, record: SkillRecord) -> None:
        self._handle.write(record.model_dump_json())
        self._handle.write("\n")

    __call__ = write

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
