"""The validated tasks the server can open episodes on: read from the validators' records in the
store, unpacked once each into the server's state folder (kept across restarts)."""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from skillgym_core import keys
from skillgym_core.archive import unpack_dir
from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SkillGymError, TransientError
from skillgym_core.store.base import Store, get_json

log = logging.getLogger(__name__)
VALIDATION_SUFFIX = "/validation.json"


class TaskNotServable(SkillGymError):
    """The task is unknown, not validated, or its package cannot be read."""

    reason = "task_not_servable"
    retryable = False


@dataclass(frozen=True)
class TaskEntry:
    task_id: str
    package_key: str
    skill_id: str
    skill_name: str
    family: str
    category: str | None
    difficulty: str
    root: Path

    @property
    def task(self) -> TaskDir:
        return TaskDir(self.root)


class TaskCatalog:
    def __init__(self, store: Store, cache_dir: Path, refresh_s: float = 30.0) -> None:
        self.store = store
        self.cache_dir = cache_dir
        self.refresh_s = refresh_s
        self._entries: dict[str, TaskEntry] = {}
        self._refused: set[str] = set()
        self._refreshed_at = float("-inf")
        self._lock = threading.Lock()
        cache_dir.mkdir(parents=True, exist_ok=True)

    def entries(self) -> list[TaskEntry]:
        self.refresh()
        with self._lock:
            return list(self._entries.values())

    def get(self, task_id: str) -> TaskEntry:
        with self._lock:
            entry = self._entries.get(task_id)
        if entry is None:
            self.refresh(force=True)
            with self._lock:
                entry = self._entries.get(task_id)
        if entry is None:
            raise TaskNotServable(f"no validated task {task_id!r} in {self.store.describe()}", task_id=task_id)
        return entry

    def refresh(self, *, force: bool = False) -> None:
        if not force and time.monotonic() - self._refreshed_at < self.refresh_s:
            return
        self._refreshed_at = time.monotonic()
        for key in self.store.list("tasks/"):
            if not key.endswith(VALIDATION_SUFFIX):
                continue
            task_id = key.removeprefix("tasks/").removesuffix(VALIDATION_SUFFIX)
            with self._lock:
                known = task_id in self._entries or task_id in self._refused
            if known:
                continue
            try:
                entry = self._load(task_id)
            except TransientError as exc:  # the store is down for now: tried again on the next refresh
                log.warning("task not loaded yet", extra={"task_id": task_id, "error": str(exc)})
                continue
            except (SkillGymError, OSError, ValueError) as exc:
                log.warning("task not servable", extra={"task_id": task_id, "error": str(exc)})
                entry = None
            with self._lock:
                if entry is None:
                    self._refused.add(task_id)
                else:
                    self._entries[task_id] = entry

    def _load(self, task_id: str) -> TaskEntry | None:
        record = get_json(self.store, keys.task_validation(task_id))
        if not record.get("valid"):
            return None
        package_key = record.get("package_key") or keys.task_package(task_id)
        root = self._unpacked(task_id, package_key)
        metadata = TaskDir(root).config().metadata
        return TaskEntry(
            task_id=task_id, package_key=package_key, skill_id=metadata.skill_id, skill_name=metadata.skill_name,
            family=metadata.template, category=record.get("category") or metadata.category,
            difficulty=metadata.difficulty, root=root,
        )  # fmt: skip

    def _unpacked(self, task_id: str, package_key: str) -> Path:
        root = self.cache_dir / task_id
        if (root / "task.toml").is_file():
            return root
        staging = Path(tempfile.mkdtemp(prefix=f".{task_id}-", dir=self.cache_dir))
        try:
            unpack_dir(self.store.get_bytes(package_key), staging)
            staging.rename(root)
        except OSError:
            if not (root / "task.toml").is_file():
                raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # nothing left there once renamed
        return root
