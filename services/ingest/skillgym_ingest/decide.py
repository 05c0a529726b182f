"""The corpus-level verdict: dedup against what came before, then accept or reject with reasons."""

from __future__ import annotations

from collections import Counter

from skillgym_core import metrics
from skillgym_core.contracts.skill import SkillRecord

from skillgym_ingest.analyze import Analysis
from skillgym_ingest.dedup import NearDuplicateIndex
from skillgym_ingest.filters import DUPLICATE, INCONSISTENT
from skillgym_ingest.llm import LLMAnnotator
from skillgym_ingest.settings import IngestSettings


class Decider:
    """Sees analyses in a fixed order; the first of each duplicate cluster is its representative."""

    def __init__(self, settings: IngestSettings) -> None:
        self.settings = settings
        self._exact: dict[str, str] = {}
        self._near = NearDuplicateIndex(settings) if settings.dedup else None
        self._counts: Counter[str] = Counter()

    def decide(self, analysis: Analysis, annotator: LLMAnnotator | None = None) -> SkillRecord:
        record = analysis.record
        self._counts["found"] += 1
        metrics.SKILLS_SEEN.inc()
        if analysis.normalized_hash is not None:
            self._counts["readable"] += 1
            if self.settings.dedup:
                self._dedup(analysis)
            if record.duplicate_of is None:
                self._counts["unique"] += 1
        if annotator is not None and not record.reasons:
            self._counts["llm_annotated"] += 1
            if not annotator.annotate(record):
                record.reasons.append(INCONSISTENT)
        record.accepted = not record.reasons
        if record.accepted:
            self._counts["accepted"] += 1
            metrics.SKILLS_ACCEPTED.inc()
        else:
            self._counts["rejected"] += 1
            for reason in record.reasons:
                self._counts[f"rejected:{reason}"] += 1
                metrics.SKILLS_REJECTED.labels(reason=reason).inc()
        return record

    def _dedup(self, analysis: Analysis) -> None:
        record = analysis.record
        assert analysis.normalized_hash is not None
        representative = self._exact.get(analysis.normalized_hash)
        kind, similarity = "exact", 1.0
        if representative is None and self._near is not None and analysis.signature is not None:
            found = self._near.query_or_add(record.skill_id, analysis.signature)
            if found is not None:
                (representative, similarity), kind = found, "near"
        if representative is None:
            self._exact[analysis.normalized_hash] = record.skill_id
            record.duplicate_cluster = record.skill_id
            return
        if kind == "near":
            self._exact[analysis.normalized_hash] = representative
        record.duplicate_of = representative
        record.duplicate_cluster = representative
        record.duplicate_kind = kind  # type: ignore[assignment]
        record.duplicate_similarity = round(similarity, 4)
        record.reasons.append(DUPLICATE)
        self._counts[f"duplicate:{kind}"] += 1

    def funnel(self) -> dict[str, int]:
        return dict(sorted(self._counts.items()))
