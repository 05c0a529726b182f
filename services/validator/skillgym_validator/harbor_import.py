"""Publishing tasks people already have (Harbor task folders, or a dataset checkout holding many)
into a SkillGym store, validated or not, so sampling, reports, export and the environment server
take them like generated tasks.

Each task gets ``tasks/<task_id>/package.tar.gz`` and ``tasks/<task_id>/validation.json``. A
folder that is not a conforming task gets a record with the reasons and is not stored; the
rest of the batch goes on. A task without a reference solution is stored unvalidated."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.conformance import check_task
from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SkillGymError
from skillgym_core.sandbox import janitor
from skillgym_core.sandbox.factory import make_sandbox
from skillgym_core.store.base import Store, put_json
from skillgym_core.verifier_code import unconfined_in_task

from skillgym_validator.gate import error_info, failure_reason
from skillgym_validator.settings import ValidatorSettings
from skillgym_validator.validation import UNLABELLED, Validator

SOURCE = "harbor-import"
MAX_DEPTH = 4


def task_folders(sources: Iterable[Path]) -> Iterator[Path]:
    """Every task folder (one holding ``task.toml``) named or found below the sources, in order;
    a dataset's tasks are found up to a few levels down, never below a task folder."""
    seen: set[Path] = set()
    for source in sources:
        for folder in _walk(Path(source), MAX_DEPTH):
            if folder.resolve() not in seen:
                seen.add(folder.resolve())
                yield folder


def _walk(folder: Path, depth: int) -> Iterator[Path]:
    if (folder / "task.toml").is_file():
        yield folder
        return
    if depth == 0 or not folder.is_dir() or folder.is_symlink():
        return
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
            yield from _walk(child, depth - 1)


def _refused(folder: Path, reasons: list[str], **extra: Any) -> dict[str, Any]:
    return {"path": str(folder), "imported": False, "valid": False, "label": UNLABELLED, "reasons": reasons, **extra}


def import_tasks(sources: Iterable[Path], store: Store, *, settings: ValidatorSettings | None = None,
                 validate: bool = True) -> list[dict[str, Any]]:
    """One record per task folder found (see the module docstring); never raises for a task's sake."""
    folders = list(task_folders(sources))
    validator = Validator(make_sandbox(settings or ValidatorSettings()), settings or ValidatorSettings()) if validate else None
    records = []
    scratch = Path(tempfile.mkdtemp(prefix="skillgym-import-"))
    try:
        for folder in folders:
            records.append(_import_one(folder, store, validator, scratch))
    finally:
        if validator is not None:
            validator.close()
        # the runs' workspaces, volumes mounted on them, are discarded on the janitor's thread:
        # removing the scratch before that is done cannot remove a mount point
        janitor.wait_idle()
        janitor.remove_tree(scratch)
    return records


def _import_one(folder: Path, store: Store, validator: Validator | None, scratch: Path) -> dict[str, Any]:
    issues = check_task(folder)
    if issues:
        return _refused(folder, [f"{issue.code}: {issue.message}" for issue in issues])
    task = TaskDir(folder)
    try:
        config = task.config()
        task_id = config.metadata.task_id
        package_key = store.put_bytes(keys.task_package(task_id), pack_dir(folder), "application/gzip")
        if validator is not None:
            record = validator.validate(task, scratch)
        else:
            record = {"task_id": task_id, "skill_id": config.metadata.skill_id, "category": config.metadata.category,
                      "path": str(folder), "valid": False, "label": UNLABELLED, "reasons": ["not_validated"]}
    except (SkillGymError, OSError) as exc:
        return _refused(folder, [failure_reason(exc)], error=error_info(exc))
    record.update(imported=True, package_key=package_key, source=SOURCE, harbor=config.is_harbor,
                  task_name=config.task.name)
    # imported tasks are not reviewed: say where their verifier runs the agent's code with its own
    # rights, so a consumer knows the verdict is the task's own, not one SkillGym can vouch for
    record["unconfined_agent_code"] = [finding.message() for finding in unconfined_in_task(task)][:20]
    put_json(store, keys.task_validation(task_id), record)
    return record
