"""``skillgym export-tasks``: a run's validated tasks as Harbor task directories, with an index.

``OUT/tasks/<task_id>/`` is each task as the validator accepted it (``instruction.md``,
``task.toml``, ``environment/``, ``tests/``, ``solution/``), unpacked with the archive checks every
untrusted package gets. ``OUT/tasks.jsonl`` holds one row per task, every row the same flat
columns of one type each, so ``datasets.load_dataset("json", data_files="OUT/tasks.jsonl")``
and any JSON Lines reader load it as is: the path of the task directory (relative to ``OUT``), the
instruction, the skill, family, difficulty and knobs (a JSON text: their names differ by family),
how the reference solution uses the skill, and the validator's label.

A task whose package cannot be read or unpacked is reported and left out; the others are written."""

from __future__ import annotations

import argparse
import json
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.archive import unpack_dir
from skillgym_core.errors import SkillGymError
from skillgym_core.store.base import Store
from skillgym_core.store.local import open_run_store

from skillgym.console import console
from skillgym.evaluate import ValidatedTask, validation_records

INDEX = "tasks.jsonl"
TASKS_DIR = "tasks"


class TaskExportError(SkillGymError):
    """The export as a whole cannot be written (an existing, non-empty destination)."""

    reason = "task_export"
    retryable = False


@dataclass
class ExportResult:
    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def index_row(task: ValidatedTask, root: Path, out: Path, validation: dict[str, Any]) -> dict[str, Any]:
    """The task's row: flat columns, each one type in every row."""
    config = tomllib.loads((root / "task.toml").read_text(encoding="utf-8"))
    meta = config.get("metadata") or {}
    instruction = (root / "instruction.md").read_text(encoding="utf-8")
    usage = meta.get("skill_usage") or {}
    return {
        "task_id": task.task_id,
        "path": root.relative_to(out).as_posix(),
        "instruction": instruction,
        "skill_id": task.skill_id,
        "skill_name": _text(meta.get("skill_name")),
        "category": _text(meta.get("category") or task.category),
        "family": _text(meta.get("family") or meta.get("template")),
        "difficulty": _text(meta.get("difficulty")),
        "seed": int(meta["family_seed"]) if isinstance(meta.get("family_seed"), int) else None,
        "knobs": json.dumps(meta.get("knobs") or {}, sort_keys=True),
        "skill_usage": _text(usage.get("kind") if isinstance(usage, dict) else usage),
        "label": _text(validation.get("label")),
        "has_solution": (root / "solution").is_dir(),
    }


def export_tasks(store: Store, out: Path, *, skills: list[str] | None = None, force: bool = False) -> ExportResult:
    """Write every validated task of ``store`` under ``out`` and the index beside them."""
    if out.exists() and any(out.iterdir()) and not force:
        raise TaskExportError(f"{out} exists and is not empty (pass --force to replace it)", path=str(out))
    if out.exists() and force:
        shutil.rmtree(out)
    (out / TASKS_DIR).mkdir(parents=True)
    result = ExportResult()
    for task, validation in sorted(validation_records(store, skills), key=lambda pair: pair[0].task_id):
        root = out / TASKS_DIR / task.task_id
        try:
            unpack_dir(store.get_bytes(task.package_key), root)
            result.rows.append(index_row(task, root, out, validation))
        except (SkillGymError, OSError, ValueError, KeyError) as exc:
            shutil.rmtree(root, ignore_errors=True)
            reason = getattr(exc, "reason", type(exc).__name__)
            result.skipped.append({"task_id": task.task_id, "reason": str(reason), "message": str(exc)[:300]})
    lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in result.rows)
    (out / INDEX).write_text(lines, encoding="utf-8")
    return result


def _cmd_export_tasks(args: argparse.Namespace) -> int:
    store = open_run_store(args.run_dir, "tasks", TaskExportError)
    result = export_tasks(store, args.out, skills=args.skills, force=args.force)
    console.print(f"{len(result.rows)} validated tasks written to {args.out / TASKS_DIR}, indexed in {args.out / INDEX}")
    for skipped in result.skipped:
        console.print(f"left out {skipped['task_id']}: {skipped['reason']}: {skipped['message']}")
    return 0 if result.rows or not result.skipped else 1


def register(sub: Any) -> None:
    """Attach ``export-tasks`` to the top-level parser."""
    export = sub.add_parser("export-tasks", help="write a run's validated tasks as Harbor task directories with a "
                            "tasks.jsonl index that the datasets library loads as is")
    export.add_argument("run_dir", type=Path, help="a run directory (holding store/) or a store root")
    export.add_argument("--out", type=Path, required=True, help="where the task directories and tasks.jsonl go")
    export.add_argument("--skills", nargs="*", help="only the tasks of these skill ids")
    export.add_argument("--force", action="store_true", help="replace a non-empty destination")
    export.set_defaults(func=_cmd_export_tasks)
