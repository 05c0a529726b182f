"""``skillgym export-tasks``: validated tasks as Harbor directories with an index ``datasets`` loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.contracts.task import TaskDir
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore

from skillgym.cli import main
from skillgym.task_export import INDEX, TaskExportError, export_tasks
from tests.sampler.tasks import write_task


def _publish(store: LocalStore, tmp: Path, task_id: str, *, valid: bool = True, family: dict | None = None,
             package: bytes | None = None) -> None:
    task = write_task(tmp / task_id, task_id=task_id)
    if family is not None:
        config = task.config()
        for name, value in family.items():
            setattr(config.metadata, name, value)
        task.write_config(config)
    key = store.put_bytes(keys.task_package(task_id), package or pack_dir(task.root), "application/gzip")
    put_json(store, keys.task_validation(task_id), {"task_id": task_id, "skill_id": "skill-ledger", "valid": valid,
                                                     "label": "skill-dep" if valid else "unlabelled",
                                                     "package_key": key, "category": "data-processing"})


FAMILY = {"family": "tabular-profile", "difficulty": "easy", "family_seed": 3,
          "knobs": {"record_count": 40, "noise_level": 0.1}, "skill_usage": {"kind": "library", "libraries": ["pandas"]}}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    store = LocalStore(tmp_path / "run" / "store")
    _publish(store, tmp_path / "src", "task-a0000001", family=FAMILY)
    _publish(store, tmp_path / "src", "task-b0000002")
    _publish(store, tmp_path / "src", "task-c0000003", valid=False)
    return tmp_path / "run"


def test_validated_tasks_become_directories_and_rows_that_datasets_loads(run_dir: Path, tmp_path: Path) -> None:
    import datasets

    out = tmp_path / "export"
    result = export_tasks(LocalStore(run_dir / "store"), out)
    assert [row["task_id"] for row in result.rows] == ["task-a0000001", "task-b0000002"]  # not the invalid one
    assert result.skipped == []
    for row in result.rows:
        task = TaskDir(out / row["path"])
        assert task.check_layout() == []
        assert task.config().metadata.task_id == row["task_id"]
    loaded = datasets.load_dataset("json", data_files=str(out / INDEX), split="train")
    assert loaded.num_rows == 2
    first = loaded[0]
    assert first["family"] == "tabular-profile" and first["difficulty"] == "easy" and first["seed"] == 3
    assert json.loads(first["knobs"]) == FAMILY["knobs"]
    assert first["skill_usage"] == "library" and first["label"] == "skill-dep" and first["has_solution"] is True
    assert first["instruction"] == (out / first["path"] / "instruction.md").read_text()
    assert loaded[1]["family"] == "procedural-file" and loaded[1]["seed"] is None


def test_an_unreadable_package_is_left_out_and_the_rest_written(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    _publish(store, tmp_path / "src", "task-a0000001")
    _publish(store, tmp_path / "src", "task-b0000002", package=b"not a tar archive")
    result = export_tasks(store, tmp_path / "export")
    assert [row["task_id"] for row in result.rows] == ["task-a0000001"]
    assert [(s["task_id"], s["reason"]) for s in result.skipped] == [("task-b0000002", "unsafe_archive")]
    assert not (tmp_path / "export" / "tasks" / "task-b0000002").exists()
    assert len((tmp_path / "export" / INDEX).read_text().splitlines()) == 1


def test_a_non_empty_destination_is_refused_unless_forced(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(TaskExportError) as refused:
        export_tasks(LocalStore(run_dir / "store"), out)
    assert refused.value.reason == "task_export" and (out / "keep.txt").exists()
    assert main(["export-tasks", str(run_dir), "--out", str(out), "--force"]) == 0
    assert not (out / "keep.txt").exists() and len((out / INDEX).read_text().splitlines()) == 2
    assert main(["export-tasks", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) != 0
