"""``skillgym import-harbor``: a dataset checkout's tasks published into a store, validated on
containers or stored unvalidated; a broken folder is refused with its reasons and the batch goes on."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox import janitor
from skillgym_core.sandbox.hostmounts import mount_volume
from skillgym_core.store.local import LocalStore
from skillgym_validator import harbor_import
from skillgym_validator.harbor_import import import_tasks, task_folders
from skillgym_validator.settings import ValidatorSettings

from skillgym.cli import main
from skillgym.evaluate import validated_tasks
from tests.support.harbor_tasks import harbor_suite
from tests.support.podman import PodmanService


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "dataset"
    harbor_suite(root / "tasks")
    (root / "tasks" / "broken").mkdir()
    (root / "tasks" / "broken" / "task.toml").write_text("x = [\n")
    (root / "tasks" / "hello-world" / "nested").mkdir()  # nothing below a task folder is searched
    (root / "tasks" / "hello-world" / "nested" / "task.toml").write_text("")
    return root


def test_task_folders_are_found_in_a_checkout_once(dataset: Path) -> None:
    found = [p.name for p in task_folders([dataset, dataset / "tasks" / "apt-inventory"])]
    assert found == ["agent-user", "apt-inventory", "broken", "hello-world", "log-steps", "no-solution"]


def test_without_validation_tasks_are_stored_unvalidated_and_broken_ones_refused(dataset: Path, tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    records = {Path(r["path"]).name: r for r in import_tasks([dataset], store, validate=False)}
    assert not records["broken"]["imported"] and any(r.startswith("toml_syntax") for r in records["broken"]["reasons"])
    stored = {k for k in store.list("tasks/")}
    assert "tasks/harbor-tests-apt-inventory/package.tar.gz" in stored and len(stored) == 10
    assert records["apt-inventory"]["reasons"] == ["not_validated"] and validated_tasks(store) == []


def test_an_imported_verifier_that_runs_agent_code_is_flagged(dataset: Path, tmp_path: Path) -> None:
    task = dataset / "tasks" / "apt-inventory"
    flagged = tmp_path / "flagged" / "pytest-on-agent-code"
    shutil.copytree(task, flagged)
    (flagged / "tests" / "test.sh").write_text(
        "#!/bin/bash\npytest /app/tests && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n")
    records = {Path(r["path"]).name: r for r in import_tasks([task, flagged], LocalStore(tmp_path / "store"),
                                                               validate=False)}
    assert records["apt-inventory"]["unconfined_agent_code"] == []
    assert records["pytest-on-agent-code"]["imported"]
    assert [f.split(": ", 1)[0] for f in records["pytest-on-agent-code"]["unconfined_agent_code"]] == ["tests/test.sh:2"]


class _VolumeValidator:
    """Leaves a workspace with a volume mounted on it to the janitor, as the validity gate does."""

    def __init__(self, *args: object) -> None:
        pass

    def validate(self, task: TaskDir, scratch: Path) -> dict[str, Any]:
        workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=scratch))
        mount_volume(workspace, size_mb=1, owner=(65534, 65534))
        janitor.later(lambda: time.sleep(0.5))  # a janitor still busy with earlier runs
        janitor.discard_tree(workspace)
        return {"task_id": task.config().metadata.task_id, "valid": True, "reasons": []}

    def close(self) -> None:
        pass


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_the_import_scratch_is_removed_with_the_runs_volumes(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(harbor_import, "Validator", _VolumeValidator)
    records = import_tasks([dataset / "tasks" / "hello-world"], LocalStore(tmp_path / "store"))
    assert [record["valid"] for record in records] == [True]
    assert list(scratch.iterdir()) == []


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.deferred_service
def test_import_harbor_validates_on_containers(dataset: Path, tmp_path: Path, podman: PodmanService,
                                               monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SKILLGYM_SANDBOX", "container")
    monkeypatch.setenv("SKILLGYM_CONTAINER_ENGINE_URL", podman.url)
    monkeypatch.setenv("SKILLGYM_ENV_CACHE", str(tmp_path / "cache"))
    code = main(["import-harbor", str(dataset), "--out", str(tmp_path / "run"), "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{\"")]
    records = {Path(r["path"]).name: r for r in lines if "path" in r}
    assert code == 1  # the broken folder is not stored
    assert records["hello-world"]["valid"] and records["apt-inventory"]["valid"] and records["log-steps"]["valid"]
    assert records["no-solution"]["imported"] and records["no-solution"]["reasons"] == ["no_solution"]
    store = LocalStore(tmp_path / "run" / "store")
    assert records["agent-user"]["valid"]
    assert sorted(t.task_id for t in validated_tasks(store)) == [
        "harbor-local-agent-user", "harbor-local-hello-world", "harbor-tests-apt-inventory", "harbor-tests-log-steps"]
    assert ValidatorSettings().sandbox == "container"
