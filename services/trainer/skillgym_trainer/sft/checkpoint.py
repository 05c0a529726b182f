"""Checkpoints: Hugging Face files any tool can load, plus what resuming needs (step, loss
curve, optimiser state or the DeepSpeed checkpoint). Mirrored to the store when asked."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from skillgym_core.store.base import Store
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from skillgym_trainer.sft.engines import Engine

STATE_FILE = "trainer_state.json"
OPTIMIZER_FILE = "optimizer.pt"
DEEPSPEED_DIR = "deepspeed"
DEEPSPEED_TAG = "state"
_STEP_DIR = re.compile(r"^step-(\d+)$")


def export_model(engine: Engine, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, directory: Path) -> None:
    """Write ``save_pretrained`` files (weights gathered from ZeRO-3 when needed)."""
    directory.mkdir(parents=True, exist_ok=True)
    full_state: Callable[[], dict[str, torch.Tensor] | None] | None = getattr(engine, "full_state_dict", None)
    state = full_state() if full_state is not None else None
    model.config.use_cache = True
    if state is not None:
        model.save_pretrained(str(directory), state_dict=state)
    else:
        model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    model.config.use_cache = False


def save_checkpoint(
    engine: Engine,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    root: Path,
    step: int,
    curve: list[dict[str, Any]],
) -> Path:
    directory = root / f"step-{step}"
    export_model(engine, model, tokenizer, directory)
    save_ds: Callable[[Path, str], None] | None = getattr(engine, "save_checkpoint", None)
    if save_ds is not None:
        save_ds(directory / DEEPSPEED_DIR, DEEPSPEED_TAG)
    else:
        torch.save(engine.state_dict(), directory / OPTIMIZER_FILE)
    (directory / STATE_FILE).write_text(json.dumps({"step": step, "loss_curve": curve}, indent=2))
    return directory


def latest_checkpoint(root: Path) -> tuple[Path, int] | None:
    found = []
    for path in root.glob("step-*"):
        match = _STEP_DIR.match(path.name)
        if match and (path / STATE_FILE).is_file():
            found.append((int(match.group(1)), path))
    if not found:
        return None
    step, path = max(found)
    return path, step


def restore_engine(engine: Engine, directory: Path) -> None:
    load_ds: Callable[[Path, str], None] | None = getattr(engine, "load_checkpoint", None)
    if load_ds is not None:
        load_ds(directory / DEEPSPEED_DIR, DEEPSPEED_TAG)
    else:
        engine.load_state_dict(torch.load(directory / OPTIMIZER_FILE, weights_only=False))


def read_state(directory: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((directory / STATE_FILE).read_text())
    return state


def upload_dir(store: Store, local: Path, prefix: str) -> list[str]:
    written = []
    for path in sorted(local.rglob("*")):
        if path.is_file():
            written.append(
                store.put_bytes(f"{prefix.rstrip('/')}/{path.relative_to(local).as_posix()}", path.read_bytes())
            )
    return written


def download_prefix(store: Store, prefix: str, local: Path) -> int:
    prefix = prefix.rstrip("/") + "/"
    count = 0
    for key in store.list(prefix):
        target = local / key[len(prefix) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(store.get_bytes(key))
        count += 1
    return count


def prune(root: Path, keep: int) -> None:
    """Keep only the newest ``keep`` step directories."""
    steps = sorted((int(m.group(1)), p) for p in root.glob("step-*") if (m := _STEP_DIR.match(p.name)))
    for _, path in steps[:-keep] if keep > 0 else []:
        shutil.rmtree(path, ignore_errors=True)


def mirror_checkpoint(store: Store, directory: Path, root_prefix: str) -> str:
    """Copy the step directory ``directory`` to ``<root_prefix>/<step-N>/`` and drop the older
    steps mirrored there. Its state file goes last: a mirrored step counts only once complete,
    so a crash in the middle of a copy leaves the previous step the one to resume from."""
    prefix = f"{root_prefix.rstrip('/')}/{directory.name}"
    files = sorted(path for path in directory.rglob("*") if path.is_file())
    for path in sorted(files, key=lambda path: path.relative_to(directory).as_posix() == STATE_FILE):
        store.put_bytes(f"{prefix}/{path.relative_to(directory).as_posix()}", path.read_bytes())
    for key in list(store.list(root_prefix.rstrip("/") + "/")):
        if not key.startswith(prefix + "/"):
            store.delete(key)
    return prefix


def download_latest_checkpoint(store: Store, root_prefix: str, local_root: Path) -> int | None:
    """Fetch the newest complete step mirrored under ``root_prefix`` into ``local_root/step-N``;
    its step, or None when there is none."""
    root = root_prefix.rstrip("/") + "/"
    steps = []
    for key in store.list(root):
        step_dir, _, name = key[len(root) :].partition("/")
        match = _STEP_DIR.match(step_dir)
        if match and name == STATE_FILE:
            steps.append((int(match.group(1)), step_dir))
    if not steps:
        return None
    step, step_dir = max(steps)
    download_prefix(store, root + step_dir, local_root / step_dir)
    return step
