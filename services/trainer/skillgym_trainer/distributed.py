"""Entry point of a ``TrainingJob`` pod: ``torchrun -m skillgym_trainer.distributed``.

Reads the dataset from the store, trains with DeepSpeed on every rank, mirrors checkpoints
to ``<output-prefix>/checkpoints/`` (so a restarted pod resumes), uploads the final model to
``<output-prefix>/checkpoint/`` and, on rank 0, publishes ``TrainingCompleted``."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillgym_core.bus.factory import make_bus
from skillgym_core.contracts.cloudevents import publish_event
from skillgym_core.contracts.events import Envelope, TrainingCompleted
from skillgym_core.store.base import Store, put_json
from skillgym_core.store.factory import make_store

from skillgym_trainer.errors import DatasetError
from skillgym_trainer.settings import TrainerSettings
from skillgym_trainer.sft.checkpoint import download_prefix, upload_dir
from skillgym_trainer.sft.loop import SFTConfig, TrainResult
from skillgym_trainer.sft.run import RunSpec, run_sft


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="skillgym_trainer.distributed")
    parser.add_argument("--dataset-key", required=True, help="chat JSONL key, or a datasets/<id> prefix")
    parser.add_argument("--base-model", required=True)
    parser.add_argument("--trainer-config", type=Path, required=True)
    parser.add_argument("--deepspeed-config", type=Path, required=True)
    parser.add_argument("--output-prefix", required=True)
    parser.add_argument("--resume", action="store_true")
    return parser.parse_args(argv)


def _read_json(path: Path) -> dict[str, Any]:
    text = path.read_text().strip() if path.is_file() else ""
    value: dict[str, Any] = json.loads(text) if text else {}
    return value


def load_rows(store: Store, dataset_key: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if dataset_key.endswith(".jsonl"):
        lines = store.get_bytes(dataset_key).decode().splitlines()
        return [json.loads(line) for line in lines if line.strip()], []
    prefix = dataset_key.rstrip("/")
    rows: dict[str, list[dict[str, Any]]] = {}
    for split in ("train", "eval"):
        key = f"{prefix}/chat/{split}.jsonl"
        lines = store.get_bytes(key).decode().splitlines() if store.exists(key) else []
        rows[split] = [json.loads(line) for line in lines if line.strip()]
    if not rows["train"]:
        raise DatasetError(f"no chat train split under {prefix}", dataset_key=dataset_key)
    return rows["train"], rows["eval"]


def spec_from(trainer: dict[str, Any], deepspeed: dict[str, Any], base_model: str, resume: bool) -> RunSpec:
    import torch

    return RunSpec(
        base_model=base_model,
        gguf_file=trainer.get("gguf_file"),
        tokens_per_batch=int(trainer.get("tokens_per_batch", 4096)),
        max_example_tokens=int(trainer.get("max_example_tokens", 32768)),
        engine="zero3" if deepspeed.get("zero_optimization", {}).get("stage", 3) == 3 else "zero2",
        deepspeed_config=deepspeed or None,
        bf16=bool(deepspeed.get("bf16", {}).get("enabled", torch.cuda.is_available())),
        checkpoint_every=int(trainer.get("checkpoint_every", 50)),
        resume=resume,
        sft=SFTConfig(
            max_steps=int(trainer.get("max_steps", 100)),
            learning_rate=float(trainer.get("learning_rate", 1e-5)),
            micro_batches_per_step=int(trainer.get("micro_batches_per_step", 1)),
            gradient_checkpointing=bool(trainer.get("gradient_checkpointing", True)),
            seed=int(trainer.get("seed", 0)),
            run_id=os.environ.get("SKILLGYM_TRAINING_JOB", "training-job"),
            progress=int(os.environ.get("RANK", "0")) == 0,
        ),
    )


def run(args: argparse.Namespace, settings: TrainerSettings | None = None) -> TrainResult:
    settings = settings or TrainerSettings()
    store = make_store(settings)
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    trainer, deepspeed = _read_json(args.trainer_config), _read_json(args.deepspeed_config)
    spec = spec_from(trainer, deepspeed, args.base_model, args.resume)
    train_rows, eval_rows = load_rows(store, args.dataset_key)
    prefix = args.output_prefix.rstrip("/")

    def mirror(directory: Path) -> None:
        upload_dir(store, directory, f"{prefix}/checkpoints/{directory.name}")

    # once the model is uploaded, a failure to clean up must not fail the job
    with tempfile.TemporaryDirectory(prefix="training-", ignore_cleanup_errors=True) as work:
        workdir = Path(work)
        out_dir = workdir / "out"
        if args.resume:
            download_prefix(store, f"{prefix}/checkpoints", out_dir / "checkpoints")
        result = run_sft(
            train_rows, spec, out_dir, workdir / "cache", eval_rows, on_checkpoint=mirror, rank=rank, world_size=world
        )
        if rank == 0:
            upload_dir(store, out_dir, f"{prefix}/checkpoint")
    if rank == 0:
        metrics_key = put_json(store, f"{prefix}/metrics.json", result.to_dict())
        run_id = os.environ.get("SKILLGYM_TRAINING_JOB") or prefix.rsplit("/", 1)[-1]
        completed = TrainingCompleted(
            run_id=run_id,
            dataset_key=args.dataset_key,
            checkpoint_key=f"{prefix}/checkpoint",
            metrics_key=metrics_key,
            examples=len(train_rows),
            steps=len(result.steps) + len(result.history),
            loss_first=float(str(result.history[0]["loss"])) if result.history else result.loss_first,
            loss_last=result.loss_last,
        )
        bus = make_bus(settings)
        envelope = Envelope.wrap(completed, producer="trainer", correlation_id=settings.correlation_id)
        publish_event(bus, envelope, settings.event_mode)
        bus.close()
    return result


def main(argv: Sequence[str] | None = None) -> None:
    run(parse_args(argv))


if __name__ == "__main__":
    main()
