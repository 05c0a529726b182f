"""Stream (verification record, ATIF document) pairs out of a store, one trajectory at a time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skillgym_core.errors import ArtifactNotFound
from skillgym_core.store.base import Store
from skillgym_core.store.local import LocalStore

from skillgym_sampler.errors import SamplerError

RECORD_SUFFIX = "/verification.json"


def open_store(source: Store | Path | str) -> Store:
    """A store from a store object, a store root, or a run directory holding ``store/``."""
    if not isinstance(source, str | Path):
        return source
    root = Path(source)
    if not root.is_dir():
        raise SamplerError(f"{root}: no such run directory or store root", reason="no_store", path=str(root))
    for candidate in (root, root / "store"):
        if (candidate / "trajectories").is_dir() or (candidate / "tasks").is_dir():
            return LocalStore(candidate)
    raise SamplerError(f"{root} holds no store (no trajectories/ or tasks/ below it)", reason="no_store",
                       path=str(root))


def iter_runs(store: Store) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    for key in store.list("trajectories/"):
        if not key.endswith(RECORD_SUFFIX):
            continue
        record = json.loads(store.get_bytes(key))
        try:
            doc = json.loads(store.get_bytes(key[: -len(RECORD_SUFFIX)] + "/atif.json"))
        except ArtifactNotFound:
            doc = None
        yield record, doc


def funnel_counts(store: Store) -> dict[str, int]:
    """How far the pipeline's artifacts got, counted from the store's key layout."""
    counts = {"skills_ingested": 0, "tasks_built": 0, "tasks_reviewed": 0, "tasks_validated": 0}
    for key in store.list("skills/"):
        if key.endswith("/record.json"):
            counts["skills_ingested"] += 1
    for key in store.list("tasks/"):
        if key.endswith("/package.tar.gz"):
            counts["tasks_built"] += 1
        elif key.endswith("/review.json"):
            counts["tasks_reviewed"] += 1
        elif key.endswith("/validation.json"):
            counts["tasks_validated"] += 1
    return counts
