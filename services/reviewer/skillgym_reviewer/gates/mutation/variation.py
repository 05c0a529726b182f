"""Where the task's valid solutions differ. The reference and its alternatives
(``solution/alternatives/*.sh``) all pass; where their outputs differ, the task leaves the answer
open, and a mutant that survives there may well be another valid answer. Such a survivor is
counted as equivalent, not against the verifier; a mutant the verifier kills there still counts."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skillgym_reviewer.gates.mutation.generate import file_kind
from skillgym_reviewer.gates.mutation.model import Effect, Mutant
from skillgym_reviewer.gates.mutation.structured import TreePath, render

EVERYTHING: frozenset[Effect] = frozenset({"value", "type", "order", "shape", "key", "code", "bytes"})
VALUES: frozenset[Effect] = frozenset({"value", "type"})
Spot = tuple[str, frozenset[Effect]]  # location prefix ("" for the whole file), effects left open there


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _same_meaning(a: Any, b: Any) -> bool:
    """Scalars that differ only in case, spacing or number format (no mutant makes such changes)."""
    if isinstance(a, str) and isinstance(b, str):
        return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()
    numbers = (int, float)
    return isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and float(a) == float(b)


def tree_spots(ref: Any, alt: Any, path: TreePath = ()) -> list[Spot]:
    where = render(path)
    if isinstance(ref, dict) and isinstance(alt, dict):
        spots: list[Spot] = [(where, frozenset({"shape", "key"}))] if set(ref) != set(alt) else []
        for key in ref.keys() & alt.keys():
            spots += tree_spots(ref[key], alt[key], (*path, key))
        return spots
    if isinstance(ref, list) and isinstance(alt, list):
        if len(ref) != len(alt):
            return [(where, EVERYTHING)]
        if sorted(map(_canon, ref)) == sorted(map(_canon, alt)) and ref != alt:
            return [(where, frozenset({"order"}))]
        return [spot for i, (a, b) in enumerate(zip(ref, alt, strict=True)) for spot in tree_spots(a, b, (*path, i))]
    if type(ref) is not type(alt) and not _same_meaning(ref, alt):
        return [(where, EVERYTHING)]
    return [] if ref == alt or _same_meaning(ref, alt) else [(where, VALUES)]


def line_spots(ref: str, alt: str) -> list[Spot]:
    ref_lines, alt_lines = [line.rstrip() for line in ref.splitlines()], [line.rstrip() for line in alt.splitlines()]
    if ref_lines == alt_lines:
        return []
    if len(ref_lines) != len(alt_lines):
        return [("", EVERYTHING)]
    if sorted(ref_lines) == sorted(alt_lines):
        return [("", frozenset({"order"}))]
    return [(f"line {i + 1}", VALUES) for i, (a, b) in enumerate(zip(ref_lines, alt_lines, strict=True))
            if a != b and not _same_meaning(a, b)]


def file_spots(rel: str, ref: bytes, alt: bytes | None) -> list[Spot]:
    if alt is None:
        return [("", EVERYTHING)]
    if alt == ref:
        return []
    kind = file_kind(rel, ref)
    if kind == "json" and file_kind(rel, alt) == "json":
        return tree_spots(json.loads(ref), json.loads(alt))
    if kind in ("text", "markdown", "jsonl"):
        return line_spots(ref.decode("utf-8"), alt.decode("utf-8", "replace"))
    return [("", EVERYTHING)]


def _under(location: str, prefix: str) -> bool:
    if not prefix:
        return True
    return location == prefix or location.startswith((prefix + ".", prefix + "[", prefix + ":"))


@dataclass
class OpenAnswers:
    spots: dict[str, list[Spot]] = field(default_factory=dict)

    @classmethod
    def between(cls, reference: Mapping[str, bytes], alternatives: Iterable[Mapping[str, bytes]]) -> OpenAnswers:
        spots: dict[str, list[Spot]] = {}
        for outputs in alternatives:
            for rel, data in reference.items():
                found = file_spots(rel, data, outputs.get(rel))
                if found:
                    spots.setdefault(rel, []).extend(found)
        return cls(spots)

    def excuse(self, mutant: Mutant) -> str | None:
        """Why a surviving ``mutant`` may be a valid answer, or None."""
        for prefix, effects in self.spots.get(mutant.file, []):
            if mutant.effect in effects and _under(mutant.location, prefix):
                return f"an alternative solution differs at {mutant.file}:{prefix or '*'}"
        return None

    def to_dict(self) -> dict[str, list[str]]:
        return {rel: sorted({f"{prefix or '*'} ({', '.join(sorted(effects))})" for prefix, effects in found})
                for rel, found in self.spots.items()}
