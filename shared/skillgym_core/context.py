"""What every service is given: its backends. Services never build these themselves, so the
embedded runner and ``skillgym serve`` can hand the same service different backends."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from skillgym_core import keys
from skillgym_core.archive import pack_dir, unpack_dir
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox.base import Sandbox
from skillgym_core.sandbox.owned_dirs import owned_dir
from skillgym_core.store.base import Store

SCRATCH_PREFIX = "proc-"


@dataclass
class ServiceContext:
    store: Store
    sandbox: Sandbox
    scratch: Path

    def __post_init__(self) -> None:
        # a process of its own below the given directory: what a killed one left (unpacked
        # tasks, workspaces with their volumes still mounted) is swept when the next one starts
        self.scratch = owned_dir(Path(self.scratch), SCRATCH_PREFIX, mode=0o711)

    @contextmanager
    def task_checkout(self, package_key: str) -> Iterator[TaskDir]:
        """Unpack a stored task package into a private scratch directory for the duration."""
        root = Path(tempfile.mkdtemp(prefix="task-", dir=self.scratch))
        try:
            unpack_dir(self.store.get_bytes(package_key), root)
            yield TaskDir(root)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def save_task(self, task_id: str, task: TaskDir) -> str:
        return self.store.put_bytes(keys.task_package(task_id), pack_dir(task.root), "application/gzip")
