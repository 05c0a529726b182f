"""Validated tasks in a local store, as the validator leaves them: the task package plus a
``validation.json`` saying it is valid (the ledger task of ``tests/sampler/tasks.py``)."""

from __future__ import annotations

from pathlib import Path

from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.store.base import Store, put_json

from tests.sampler.tasks import SOLVE_SH, write_task

REFERENCE_COMMANDS = ["head -n 3 ledger.csv", "awk -F, 'NR>1 {s+=$2} END {print s}' ledger.csv > total.txt",
                      "cat total.txt"]


def publish_validated(store: Store, tmp: Path, task_id: str = "task-ledger0001", *, valid: bool = True,
                      category: str = "data-processing") -> str:
    task = write_task(tmp / task_id, task_id=task_id, category=category)
    package_key = store.put_bytes(keys.task_package(task_id), pack_dir(task.root), "application/gzip")
    put_json(store, keys.task_validation(task_id), {"valid": valid, "label": "skill-dep", "reasons": [],
                                                     "package_key": package_key, "category": category})
    return task_id


assert all(command in SOLVE_SH for command in REFERENCE_COMMANDS)
