"""Checkpoints mirrored to the store: only complete steps count, and only the newest is kept."""

from __future__ import annotations

import json
from pathlib import Path

from skillgym_core.store.local import LocalStore
from skillgym_trainer.sft.checkpoint import STATE_FILE, download_latest_checkpoint, mirror_checkpoint

ROOT = "training/run-1/checkpoints"


def step_dir(root: Path, step: int) -> Path:
    directory = root / f"step-{step}"
    (directory / "deepspeed").mkdir(parents=True)
    (directory / "model.safetensors").write_bytes(f"weights {step}".encode())
    (directory / "deepspeed" / "state.pt").write_bytes(b"optimizer")
    (directory / STATE_FILE).write_text(json.dumps({"step": step, "loss_curve": []}))
    return directory


def test_a_mirrored_step_replaces_the_previous_one(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    mirror_checkpoint(store, step_dir(tmp_path / "local", 2), ROOT)
    mirror_checkpoint(store, step_dir(tmp_path / "local", 4), ROOT)
    assert list(store.list(ROOT + "/")) == [
        f"{ROOT}/step-4/deepspeed/state.pt",
        f"{ROOT}/step-4/model.safetensors",
        f"{ROOT}/step-4/{STATE_FILE}",
    ]
    assert download_latest_checkpoint(store, ROOT, tmp_path / "restored") == 4
    assert (tmp_path / "restored" / "step-4" / "model.safetensors").read_bytes() == b"weights 4"
    assert (tmp_path / "restored" / "step-4" / "deepspeed" / "state.pt").is_file()


def test_a_step_whose_copy_was_cut_short_is_not_resumed_from(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    mirror_checkpoint(store, step_dir(tmp_path / "local", 2), ROOT)
    store.put_bytes(f"{ROOT}/step-4/model.safetensors", b"half written")  # no state file: the copy died
    assert download_latest_checkpoint(store, ROOT, tmp_path / "restored") == 2
    assert download_latest_checkpoint(store, "training/other/checkpoints", tmp_path / "none") is None
