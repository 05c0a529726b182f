"""Per-task caps and balance across categories or harness x model configurations.

Selection inside a group is by a seeded hash of the example id, so it is reproducible and
does not favour whatever order the store lists keys in."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence

from skillgym_core.ids import sha256_hex

from skillgym_trainer.curation.records import Candidate

GROUPERS: dict[str, Callable[[Candidate], str]] = {
    "category": lambda c: c.category,
    "configuration": lambda c: c.configuration,
    "harness": lambda c: c.harness,
    "model": lambda c: c.model,
    "label": lambda c: c.label,
    "skill": lambda c: c.skill_id,
}


def _order(candidates: Sequence[Candidate], seed: int) -> list[Candidate]:
    return sorted(candidates, key=lambda c: sha256_hex(f"{seed}:{c.example_id}".encode()))


def cap_per_task(candidates: Sequence[Candidate], cap: int | None) -> tuple[list[Candidate], int]:
    """Keep at most ``cap`` runs per task: highest reward first, ties by id."""
    if cap is None:
        return list(candidates), 0
    by_task: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_task[candidate.task_id].append(candidate)
    kept: list[Candidate] = []
    for group in by_task.values():
        kept.extend(sorted(group, key=lambda c: (-c.reward, c.example_id))[:cap])
    kept.sort(key=lambda c: c.example_id)
    return kept, len(candidates) - len(kept)


def balance(
    candidates: Sequence[Candidate], by: str | None, max_ratio: float = 2.0, seed: int = 0
) -> tuple[list[Candidate], dict[str, int]]:
    """Cap every group at ``ceil(max_ratio * smallest group)``; returns removals per group."""
    if by is None:
        return list(candidates), {}
    key = GROUPERS[by]
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        groups[key(candidate)].append(candidate)
    if not groups:
        return [], {}
    limit = math.ceil(max_ratio * min(len(group) for group in groups.values()))
    kept: list[Candidate] = []
    removed: dict[str, int] = {}
    for name, group in sorted(groups.items()):
        chosen = _order(group, seed)[:limit]
        kept.extend(chosen)
        if len(group) > len(chosen):
            removed[name] = len(group) - len(chosen)
    kept.sort(key=lambda c: c.example_id)
    return kept, removed
