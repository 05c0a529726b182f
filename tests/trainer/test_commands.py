from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.store.local import LocalStore
from skillgym_trainer.commands import export_command, load_chat_splits, resolve_base_model, train_command
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
