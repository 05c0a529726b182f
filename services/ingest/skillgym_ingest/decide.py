"""The corpus-level verdict: dedup against what came before, then accept or reject with reasons.

Works on :class:`SkillSummary` values, never on records, and keeps its state in
:mod:`dedup_index`, so deciding a skill allocates nothing that outlives it."""

from __future__ import annotations

from collections import Counter

import numpy as np
from skillgym_core import metrics

from skillgym_ingest.dedup_index import ExactIndex, NearDuplicateIndex
from skillgym_ingest.filters import DUPLICATE
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.summary import SkillSummary, Verdict


class Decider:
    """Sees skills in a fixed order; the first of each duplicate cluster is its representative."""

    def __init__(self, settings: IngestSettings) -> None:
        self.settings = settings
        self._exact = ExactIndex(settings) if settings.dedup else None
        self._near = NearDuplicateIndex(settings) if settings.dedup else None
        self._counts: Counter[str] = Counter()

    def __enter__(self) -> Decider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for index in (self._exact, self._near):
            if index is not None:
                index.close()
        self._exact = self._near = None

    def decide(
        self, skill: SkillSummary, signature: np.ndarray | None = None, keys: np.ndarray | None = None
    ) -> Verdict:
        """Dedup ``skill``; its reasons are final unless the caller adds one before :meth:`settle`."""
        verdict = Verdict(reasons=list(skill.reasons))
        self._counts["found"] += 1
        metrics.SKILLS_SEEN.inc()
        if skill.normalized_hash is not None:
            self._counts["readable"] += 1
            if self._exact is not None:
                self._dedup(skill, verdict, signature, keys)
            if verdict.duplicate_of is None:
                self._counts["unique"] += 1
        return verdict

    def count(self, key: str) -> None:
        self._counts[key] += 1

    def settle(self, verdict: Verdict) -> Verdict:
        verdict.accepted = not verdict.reasons
        if verdict.accepted:
            self._counts["accepted"] += 1
            metrics.SKILLS_ACCEPTED.inc()
        else:
            self._counts["rejected"] += 1
            for reason in verdict.reasons:
                self._counts[f"rejected:{reason}"] += 1
                metrics.SKILLS_REJECTED.labels(reason=reason).inc()
        return verdict

    def _dedup(
        self, skill: SkillSummary, verdict: Verdict, signature: np.ndarray | None, keys: np.ndarray | None
    ) -> None:
        assert skill.normalized_hash is not None and self._exact is not None
        representative = self._exact.get(skill.normalized_hash)
        kind, similarity = "exact", 1.0
        if representative is None and self._near is not None and signature is not None:
            found = self._near.query_or_add(skill.skill_id, signature, keys)
            if found is not None:
                (representative, similarity), kind = found, "near"
        if representative is None:
            self._exact.put(skill.normalized_hash, skill.skill_id)
            verdict.duplicate_cluster = skill.skill_id
            return
        if kind == "near":
            self._exact.put(skill.normalized_hash, representative)
        verdict.duplicate_of = representative
        verdict.duplicate_cluster = representative
        verdict.duplicate_kind = kind
        verdict.duplicate_similarity = round(similarity, 4)
        verdict.reasons.append(DUPLICATE)
        self._counts[f"duplicate:{kind}"] += 1

    def funnel(self) -> dict[str, int]:
        return dict(sorted(self._counts.items()))
