"""What a worker hands back for one skill: the record as JSON minus the corpus-level fields,
plus the few values the corpus-level step needs. Cheap to pickle, cheap to finish.

The corpus-level fields (dedup verdict, acceptance, reasons) are the last fields of
:class:`SkillRecord`, so a finished JSON line is the worker's head plus a short tail, written
exactly as pydantic would write it; no record is rebuilt in the main process unless a caller
asks for :class:`SkillRecord` objects."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
from skillgym_core.contracts.skill import SkillRecord

CORPUS_FIELDS = (
    "duplicate_of", "duplicate_cluster", "duplicate_kind", "duplicate_similarity", "normalized_hash", "accepted",
    "reasons",
)
# The head/tail split relies on the field order of the contract; fall back to a full dump if it changes.
TAIL_SPLIT_OK = tuple(SkillRecord.model_fields)[-len(CORPUS_FIELDS) :] == CORPUS_FIELDS
_EXCLUDE = set(CORPUS_FIELDS)
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


@dataclass
class Verdict:
    """The corpus-level decision on one skill."""

    reasons: list[str]
    duplicate_of: str | None = None
    duplicate_cluster: str | None = None
    duplicate_kind: str | None = None
    duplicate_similarity: float | None = None
    accepted: bool = False


@dataclass(slots=True)
class SkillSummary:
    skill_id: str
    name: str
    category: str | None
    reasons: list[str]
    normalized_hash: str | None
    head: bytes  # JSON of the record without CORPUS_FIELDS and its closing brace (whole if not TAIL_SPLIT_OK)
    root: Path | None = None
    packed: bytes | None = None
    signature_row: int = -1
    script_row: int = -1

    @classmethod
    def of(
        cls, record: SkillRecord, root: Path | None, packed: bytes | None, signature_row: int, script_row: int = -1
    ) -> SkillSummary:
        if TAIL_SPLIT_OK:
            head = record.model_dump_json(exclude=_EXCLUDE).encode()[:-1]
        else:
            head = record.model_dump_json().encode()
        return cls(record.skill_id, record.name, record.category, list(record.reasons), record.normalized_hash,
                   head, root, packed, signature_row, script_row)

    def json_line(self, verdict: Verdict) -> bytes:
        """The finished record as pydantic would serialise it, without building the model."""
        if not TAIL_SPLIT_OK:
            return self.record(verdict).model_dump_json().encode()
        similarity = verdict.duplicate_similarity
        tail = (
            f',"duplicate_of":{_string(verdict.duplicate_of)},"duplicate_cluster":{_string(verdict.duplicate_cluster)}'
            f',"duplicate_kind":{_string(verdict.duplicate_kind)}'
            f',"duplicate_similarity":{"null" if similarity is None else json.dumps(float(similarity))}'
            f',"normalized_hash":{_string(self.normalized_hash)},"accepted":{"true" if verdict.accepted else "false"}'
            f',"reasons":[{",".join(_string(reason) for reason in verdict.reasons)}]}}'
        )
        return self.head + tail.encode()

    def record(self, verdict: Verdict) -> SkillRecord:
        """The finished record as a model, validated from JSON (for callers that want models)."""
        if TAIL_SPLIT_OK:
            return SkillRecord.model_validate_json(self.json_line(verdict))
        record = SkillRecord.model_validate_json(self.head)
        for name in CORPUS_FIELDS:
            if name != "normalized_hash":
                setattr(record, name, getattr(verdict, name))
        return record


def _string(value: str | None) -> str:
    if value is None:
        return "null"
    if _SAFE.issuperset(value):
        return f'"{value}"'
    return json.dumps(value, ensure_ascii=False)


class DedupInputs(NamedTuple):
    """What dedup compares: the text signature and band keys, and the same for the scripts."""

    signature: np.ndarray | None = None
    keys: np.ndarray | None = None
    script_signature: np.ndarray | None = None
    script_keys: np.ndarray | None = None


@dataclass
class AnalyzedChunk:
    """A chunk's summaries in input order, with the dedup inputs of those that have text or code."""

    skills: list[SkillSummary] = field(default_factory=list)
    signatures: np.ndarray | None = None  # (rows, perms) uint32
    band_keys: np.ndarray | None = None  # (rows, bands) uint64
    script_signatures: np.ndarray | None = None  # (script rows, perms) uint32
    script_band_keys: np.ndarray | None = None  # (script rows, bands) uint64

    def dedup_inputs(self, skill: SkillSummary) -> DedupInputs:
        return DedupInputs(*_row(self.signatures, self.band_keys, skill.signature_row),
                           *_row(self.script_signatures, self.script_band_keys, skill.script_row))


def _row(
    signatures: np.ndarray | None, keys: np.ndarray | None, row: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    if row < 0 or signatures is None or keys is None:
        return None, None
    return signatures[row], keys[row]
