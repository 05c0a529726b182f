"""``skillgym evaluate`` end to end: two served models (the same way, the same harness) on the
held-out skills' validated tasks, with and without the skill, every run verified."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.errors import ArtifactNotFound
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.sft.loop import SFTConfig
from skillgym_trainer.sft.run import RunSpec, run_sft

from skillgym.evaluate import ValidatedTask, evaluate_endpoint, evaluate_models
from tests.sampler.tasks import write_task
from tests.trainer.factories import make_trajectory

pytestmark = pytest.mark.slow


def _validated(store: LocalStore, root: Path, task_id: str, skill_id: str) -> None:
    task = write_task(root / task_id, task_id=task_id)
    key = keys.task_package(task_id)
    store.put_bytes(key, pack_dir(task.root))
    put_json(store, keys.task_validation(task_id),
             {"task_id": task_id, "skill_id": skill_id, "package_key": key, "valid": True, "category": "data-processing"})


def _scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def test_models_are_compared_on_held_out_skills_with_and_without_the_skill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "run" / "store")
    _validated(store, tmp_path / "tasks", "task-heldout01", "skill-ledger")
    _validated(store, tmp_path / "tasks", "task-trained01", "skill-trained")
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "card.json").write_text(json.dumps({"train_skills": ["skill-trained"], "eval_skills": ["skill-x"]}))
    model = tmp_path / "model"
    run_sft([atif_to_chat(make_trajectory(i)) for i in range(4)], RunSpec(tokens_per_batch=512, sft=SFTConfig(max_steps=1)),
            model, tmp_path / "cache")

    scratch = _scratch(tmp_path, monkeypatch)
    report = evaluate_models(tmp_path / "run", {"base": model, "student": model}, tmp_path / "out", dataset=dataset,
                             max_steps=2)
    assert not list(scratch.glob("eval-*")), "every model's scratch is removed"

    assert report["tasks"] == ["task-heldout01"] and report["trained_skills_excluded"] == ["skill-trained"]
    for name in ("base", "student"):
        runs = report["models"][name]["results"]
        assert sorted(r["skill_provided"] for r in runs) == [False, True]
        entry = report["comparisons"]["models"][name]
        assert entry["with_skill"]["tasks"] == entry["without_skill"]["tasks"] == 1
    versus = report["comparisons"]["versus_base"]["student"]
    assert versus["with_skill"]["tasks"] == versus["without_skill"]["tasks"] == 1
    assert json.loads((tmp_path / "out" / "evaluation.json").read_text())["comparisons"] == report["comparisons"]


def test_an_evaluation_that_fails_removes_its_scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = _scratch(tmp_path, monkeypatch)
    missing = ValidatedTask("task-gone01", "skill-ledger", keys.task_package("task-gone01"), None)
    with pytest.raises(ArtifactNotFound):
        evaluate_endpoint(LocalStore(tmp_path / "run"), [missing], "http://127.0.0.1:9/v1", "base", tmp_path / "out")
    assert not list(scratch.glob("eval-*"))
