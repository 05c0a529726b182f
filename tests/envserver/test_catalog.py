"""The catalog refuses tasks that are not servable for good, but a store that is down for a
moment only delays a task: it is loaded on the next refresh."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.errors import StoreUnavailable
from skillgym_core.store.local import LocalStore
from skillgym_envserver.catalog import TaskCatalog, TaskNotServable

from tests.support.validated_tasks import publish_validated


class FlakyStore(LocalStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.down_for: set[str] = set()

    def get_bytes(self, key: str) -> bytes:
        if key in self.down_for:
            raise StoreUnavailable(f"{key}: connection refused")
        return super().get_bytes(key)


def test_a_store_outage_delays_a_task_and_an_invalid_one_stays_refused(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "store")
    publish_validated(store, tmp_path / "tasks")
    publish_validated(store, tmp_path / "tasks", "task-invalid01", valid=False)
    catalog = TaskCatalog(store, tmp_path / "cache", refresh_s=0)
    store.down_for = {"tasks/task-ledger0001/validation.json", "tasks/task-invalid01/validation.json"}
    catalog.refresh()
    assert catalog.entries() == []
    store.down_for = set()
    assert {entry.task_id for entry in catalog.entries()} == {"task-ledger0001"}
    with pytest.raises(TaskNotServable):
        catalog.get("task-invalid01")


def test_a_package_that_cannot_be_read_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "store")
    publish_validated(store, tmp_path / "tasks")
    catalog = TaskCatalog(store, tmp_path / "cache", refresh_s=0)
    store.down_for = {"tasks/task-ledger0001/package.tar.gz"}
    catalog.refresh()
    assert catalog.entries() == [] and list((tmp_path / "cache").iterdir()) == []
    store.down_for = set()
    assert [entry.task_id for entry in catalog.entries()] == ["task-ledger0001"]
    assert [path.name for path in (tmp_path / "cache").iterdir()] == ["task-ledger0001"]
