from __future__ import annotations

import json
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from skillgym_core.store.local import LocalStore
from skillgym_trainer import commands
from skillgym_trainer.commands import export_command, load_chat_splits, resolve_base_model, train_command
from skillgym_trainer.curation.build import CurationConfig, build_dataset
from skillgym_trainer.errors import DatasetError

from tests.trainer.factories import populate


def test_export_then_train_from_a_run_directory(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    populate(LocalStore(run_dir / "store"))
    published = export_command(
        run_dir, tmp_path / "export", formats=["chat", "swift"], filters={"models": ["teacher-a"]}, eval_fraction=0.25
    )
    card = json.loads((tmp_path / "export" / "card.json").read_text())
    assert card["dataset_id"] == published.dataset_id
    assert set(card["splits"]["train"]["configurations"]) == {"mini-swe-agent/teacher-a"}
    assert (tmp_path / "export" / "swift" / "train.jsonl").is_file()

    result = train_command(tmp_path / "export", "tiny", tmp_path / "model", steps=4, progress=False)
    assert result.loss_last < result.loss_first
    assert result.eval_loss_after is not None
    assert (tmp_path / "model" / "config.json").is_file()

    from_store = load_chat_splits(published.dataset_id, LocalStore(run_dir / "store"))
    assert from_store == load_chat_splits(tmp_path / "export")


def test_bad_inputs_are_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError):
        export_command(tmp_path / "missing", tmp_path / "out")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": []}\nnot json\n')
    with pytest.raises(DatasetError) as info:
        load_chat_splits(bad)
    assert info.value.details["line"] == 2
    assert resolve_base_model("tiny") == ("tiny", None)


def test_a_dataset_read_from_the_store_leaves_no_download_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "store")
    populate(store)
    published = build_dataset(store, CurationConfig(formats=["chat", "swift"], eval_fraction=0.25))
    store.put_bytes("datasets/ds-nochat/README.md", b"no chat split")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    train, evaluation = load_chat_splits(published.dataset_id, store)
    assert train and evaluation
    for missing in ("ds-missing", "ds-nochat"):
        with pytest.raises(DatasetError):
            load_chat_splits(missing, store)
    assert list(scratch.iterdir()) == []


class _Converted:
    def __init__(self, fail: bool) -> None:
        self.fail, self.config = fail, SimpleNamespace()

    def parameters(self) -> list[Any]:
        return []

    def save_pretrained(self, folder: str) -> None:
        (Path(folder) / "config.json").write_text("{}")
        if self.fail:
            raise OSError("No space left on device")


def test_a_failed_smollm2_conversion_leaves_no_staging_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLGYM_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setattr(commands, "_smollm2_gguf", lambda: ("package", "model.gguf"))
    monkeypatch.setattr(commands, "load_pretrained", lambda *args: (_Converted(fail=True), _Converted(fail=False)))
    with pytest.raises(OSError):
        resolve_base_model("smollm2")
    assert list((tmp_path / "models").iterdir()) == []
    monkeypatch.setattr(commands, "load_pretrained", lambda *args: (_Converted(fail=False), _Converted(fail=False)))
    converted, _ = resolve_base_model("smollm2")
    assert [path.name for path in (tmp_path / "models").iterdir()] == [Path(converted).name]
