"""Exact and near-duplicate removal. Of a duplicate group the best run is kept (highest
reward, then fewest tokens, then id), so the choice does not depend on input order."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from datasketch import MinHash, MinHashLSH
from skillgym_core.ids import content_id

from skillgym_trainer.curation.records import Candidate
from skillgym_trainer.tokens import message_text

_WORD = re.compile(r"\w+")


def _preference(candidate: Candidate) -> tuple[float, int, str]:
    return (-candidate.reward, len(str(candidate.example)), candidate.example_id)


def normalised_messages(example: dict[str, Any]) -> list[dict[str, Any]]:
    """Messages without call ids (which differ between otherwise identical runs)."""
    out = []
    for message in example["messages"]:
        clean = {k: v for k, v in message.items() if k != "tool_call_id"}
        if "tool_calls" in clean:
            clean["tool_calls"] = [{"function": call["function"]} for call in clean["tool_calls"]]
        out.append(clean)
    return out


def exact_key(candidate: Candidate) -> str:
    return content_id("ex", normalised_messages(candidate.example))


def remove_exact(candidates: Sequence[Candidate]) -> tuple[list[Candidate], int]:
    best: dict[str, Candidate] = {}
    for candidate in candidates:
        key = exact_key(candidate)
        if key not in best or _preference(candidate) < _preference(best[key]):
            best[key] = candidate
    kept = sorted(best.values(), key=lambda c: c.example_id)
    return kept, len(candidates) - len(kept)


def _shingles(candidate: Candidate, size: int) -> set[str]:
    text = "\n".join(message_text(message) for message in candidate.example["messages"])
    words = _WORD.findall(text.lower())
    if len(words) < size:
        return {" ".join(words)}
    return {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}


def remove_near(
    candidates: Sequence[Candidate], threshold: float = 0.9, num_perm: int = 128, shingle: int = 5
) -> tuple[list[Candidate], int]:
    """MinHash LSH over word shingles of the whole conversation; Jaccard >= ``threshold`` is a
    duplicate."""
    ordered = sorted(candidates, key=_preference)
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    kept: list[Candidate] = []
    for index, candidate in enumerate(ordered):
        signature = MinHash(num_perm=num_perm, seed=1)
        for item in _shingles(candidate, shingle):
            signature.update(item.encode())
        if lsh.query(signature):
            continue
        lsh.insert(str(index), signature)
        kept.append(candidate)
    kept.sort(key=lambda c: c.example_id)
    return kept, len(candidates) - len(kept)
