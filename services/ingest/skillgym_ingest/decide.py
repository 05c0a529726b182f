"""The corpus-level verdict: dedup against what came before, then accept or reject with reasons.

A skill is a duplicate when its normalised content matches exactly, when its text is near a
skill seen before, or when its scripts are (a rewritten SKILL.md over the same program). Works
on :class:`SkillSummary` values, never on records, and keeps its state in :mod:`dedup_index`,
so deciding a skill allocates nothing that outlives it."""

from __future__ import annotations

from collections import Counter

import numpy as np
from skillgym_core import metrics

from skillgym_ingest.dedup_index import ExactIndex, Lookup, NearDuplicateIndex
from skillgym_ingest.filters import DUPLICATE
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.summary import DedupInputs, SkillSummary, Verdict


class Decider:
    """Sees skills in a fixed order; the first of each duplicate cluster is its representative."""

    def __init__(self, settings: IngestSettings) -> None:
        self.settings = settings
        self._exact = ExactIndex(settings) if settings.dedup else None
        self._near = NearDuplicateIndex(settings) if settings.dedup else None
        self._scripts = (
            NearDuplicateIndex(settings, threshold=settings.script_near_dup_threshold) if settings.dedup else None
        )
        self._counts: Counter[str] = Counter()

    def __enter__(self) -> Decider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for index in (self._exact, self._near, self._scripts):
            if index is not None:
                index.close()
        self._exact = self._near = self._scripts = None

    def decide(self, skill: SkillSummary, inputs: DedupInputs | None = None) -> Verdict:
        """Dedup ``skill``; its reasons are final unless the caller adds one before :meth:`settle`."""
        verdict = Verdict(reasons=list(skill.reasons))
        self._counts["found"] += 1
        metrics.SKILLS_SEEN.inc()
        if skill.normalized_hash is not None:
            self._counts["readable"] += 1
            if self._exact is not None:
                self._dedup(skill, verdict, inputs or DedupInputs())
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

    def _dedup(self, skill: SkillSummary, verdict: Verdict, inputs: DedupInputs) -> None:
        assert skill.normalized_hash is not None and self._exact is not None
        representative = self._exact.get(skill.normalized_hash)
        kind, similarity, by_scripts = "exact", 1.0, False
        if representative is None:
            text = _lookup(self._near, inputs.signature, inputs.keys)
            code = _lookup(self._scripts, inputs.script_signature, inputs.script_keys)
            found = text.found if text is not None else None
            if found is None and code is not None and code.found is not None:
                found, by_scripts = code.found, True
            if found is None:
                for index, looked_up in ((self._near, text), (self._scripts, code)):
                    if index is not None and looked_up is not None:
                        index.remember(skill.skill_id, looked_up)
            else:
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
        if by_scripts:
            self._counts["duplicate:near_by_scripts"] += 1

    def funnel(self) -> dict[str, int]:
        return dict(sorted(self._counts.items()))


def _lookup(index: NearDuplicateIndex | None, signature: np.ndarray | None, keys: np.ndarray | None) -> Lookup | None:
    return None if index is None or signature is None else index.lookup(signature, keys)
