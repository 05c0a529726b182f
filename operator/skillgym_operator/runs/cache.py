"""The freshest view of every SandboxRun this process has: what the watch delivered and what its
own writes returned, whichever the API server stored later. Also the per-namespace count of
active runs the quota is checked against, and the runs that have a chore waiting."""

from __future__ import annotations

import threading
from typing import Any

from skillgym_operator.reconcile import housekeeping_pending

ACTIVE_PHASES = frozenset({"Pending", "Running"})
TOMBSTONES = 10_000
Key = tuple[str, str]


def run_key(run: dict[str, Any]) -> Key:
    meta = run["metadata"]
    return str(meta.get("namespace") or "default"), str(meta["name"])


def _version(run: dict[str, Any]) -> int | None:
    text = str(run["metadata"].get("resourceVersion") or "")
    return int(text) if text.isdigit() else None


def is_newer(candidate: dict[str, Any], known: dict[str, Any] | None) -> bool:
    """Whether ``candidate`` is at least as recent as ``known``. resourceVersions are opaque by
    contract but etcd's are increasing integers; anything else counts as newer (the later arrival)."""
    if known is None or known["metadata"].get("uid") != candidate["metadata"].get("uid"):
        return True
    new, old = _version(candidate), _version(known)
    return new is None or old is None or new >= old


def is_news(candidate: dict[str, Any], known: dict[str, Any] | None) -> bool:
    """Whether ``candidate`` may say something ``known`` does not (strictly newer, or not comparable)."""
    if known is None or known["metadata"].get("uid") != candidate["metadata"].get("uid"):
        return True
    new, old = _version(candidate), _version(known)
    return new is None or old is None or new > old


class RunCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[Key, dict[str, Any]] = {}
        self._active: dict[str, set[str]] = {}
        self._reserved: dict[str, set[str]] = {}
        self._chores: set[Key] = set()
        self._deleted: dict[Key, str] = {}

    def observe(self, run: dict[str, Any]) -> dict[str, Any]:
        """Record ``run`` unless a newer copy is known; return the freshest copy."""
        key = run_key(run)
        with self._lock:
            known = self._runs.get(key)
            if not is_newer(run, known):
                assert known is not None
                return known
            self._runs[key] = run
            status = run.get("status") or {}
            active = self._active.setdefault(key[0], set())
            if status.get("phase") in ACTIVE_PHASES and not run["metadata"].get("deletionTimestamp"):
                active.add(key[1])
            else:
                active.discard(key[1])
            if status.get("phase") in ("Queued", "Building") or housekeeping_pending(status):
                self._chores.add(key)
            else:
                self._chores.discard(key)
            return run

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._runs.get((namespace, name))

    def forget(self, namespace: str, name: str, uid: str = "") -> dict[str, Any] | None:
        """Drop a deleted run; its uid is remembered a while, so its pods' last events need no read."""
        with self._lock:
            self._active.get(namespace, set()).discard(name)
            self._reserved.get(namespace, set()).discard(name)
            self._chores.discard((namespace, name))
            if uid:
                self._deleted[(namespace, name)] = uid
                while len(self._deleted) > TOMBSTONES:
                    del self._deleted[next(iter(self._deleted))]
            return self._runs.pop((namespace, name), None)

    def deleted(self, namespace: str, name: str, uid: str) -> bool:
        with self._lock:
            return bool(uid) and self._deleted.get((namespace, name)) == uid

    def reserve(self, namespace: str, name: str, limit: int) -> int | None:
        """Count ``name`` against the namespace's active runs if it fits under ``limit``: None when
        it does, else how many runs are active there."""
        with self._lock:
            active, reserved = self._active.setdefault(namespace, set()), self._reserved.setdefault(namespace, set())
            if name in active or name in reserved:
                return None
            taken = len(active | reserved)
            if taken >= limit:
                return taken
            reserved.add(name)
            return None

    def release(self, namespace: str, name: str) -> None:
        with self._lock:
            self._reserved.get(namespace, set()).discard(name)

    def chores(self) -> list[dict[str, Any]]:
        """Runs waiting for a start, a build, a retry or a pod removal, oldest first."""
        with self._lock:
            runs = [self._runs[key] for key in self._chores if key in self._runs]
        return sorted(runs, key=lambda r: (str(r["metadata"].get("creationTimestamp") or ""), run_key(r)))
