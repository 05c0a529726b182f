"""Curation never lets a hidden path (``/solution``, ``/tests``, ``/logs/verifier``) reach a
training example: an agent cannot see them, so a trajectory naming one cannot be imitated."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from skillgym_trainer.curation.records import Candidate

HIDDEN_PATH_REFERENCE = "hidden_path_reference"


def reject_hidden_paths(candidates: Iterable[Candidate]) -> tuple[list[Candidate], dict[str, Any]]:
    """Candidates naming no hidden path, and a report of the rejected ones (count, paths, ids)."""
    kept: list[Candidate] = []
    paths: Counter[str] = Counter()
    rejected: list[str] = []
    for candidate in candidates:
        if candidate.hidden_paths:
            rejected.append(candidate.trajectory_id)
            paths.update(candidate.hidden_paths)
        else:
            kept.append(candidate)
    return kept, {"count": len(rejected), "paths": dict(sorted(paths.items())), "trajectory_ids": sorted(rejected)}
