"""Entry point of a GRPO ``TrainingJob`` pod: ``torchrun -m skillgym_trainer.rl.distributed``,
with the arguments the operator gives every training job. ``--dataset-key`` names the rollout
plan in the store, ``{"env_url": URL, "task_ids": [...]}``; ``--trainer-config`` holds
``GrpoOptions`` fields; a non-empty ``--deepspeed-config`` is handed to TRL (bf16 as it says).
Rank 0 uploads the policy and ``reward_curve.json`` to ``<output-prefix>/checkpoint/``, the report
to ``<output-prefix>/metrics.json`` and publishes ``TrainingCompleted``."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from skillgym_core.bus.factory import make_bus
from skillgym_core.contracts.cloudevents import publish_event
from skillgym_core.contracts.events import Envelope, TrainingCompleted
from skillgym_core.store.base import Store, get_json, put_json
from skillgym_core.store.factory import make_store

from skillgym_trainer.distributed import parse_args
from skillgym_trainer.errors import DatasetError, TrainingError
from skillgym_trainer.rl.grpo import GrpoOptions, GrpoReport, run_grpo
from skillgym_trainer.settings import TrainerSettings
from skillgym_trainer.sft.checkpoint import upload_dir

PLAN_FIELDS = ("env_url", "task_ids")
FIXED_FIELDS = ("out_dir", "base_model", *PLAN_FIELDS)


def read_plan(store: Store, key: str) -> dict[str, Any]:
    if not store.exists(key):
        raise DatasetError(f"no rollout plan at {key}", reason="rollout_plan_missing", key=key)
    plan = get_json(store, key)
    if not isinstance(plan, dict) or not plan.get("env_url") or not plan.get("task_ids"):
        raise DatasetError(f"{key} must hold env_url and task_ids", reason="rollout_plan_invalid", key=key)
    return {name: plan[name] for name in PLAN_FIELDS}


def grpo_options(plan: dict[str, Any], trainer: dict[str, Any], deepspeed: dict[str, Any], base_model: str,
                 out_dir: Path) -> GrpoOptions:
    fixed = sorted(set(trainer) & set(FIXED_FIELDS))
    if fixed:
        raise TrainingError(f"the trainer config may not set {', '.join(fixed)}", reason="grpo_config_invalid")
    try:
        return GrpoOptions(
            **plan, **trainer, base_model=base_model, out_dir=out_dir, device="auto",
            bf16=bool(deepspeed.get("bf16", {}).get("enabled", False)), deepspeed=deepspeed or None,
            env_token=os.environ.get("SKILLGYM_ENVSERVER_TOKEN") or None,
            progress=int(os.environ.get("RANK", "0")) == 0,
        )  # fmt: skip
    except ValidationError as exc:
        raise TrainingError("the GRPO trainer config is invalid", reason="grpo_config_invalid",
                            errors=exc.errors(include_url=False, include_context=False)) from exc


def completed_event(report: GrpoReport, run_id: str, plan_key: str, prefix: str, metrics_key: str) -> TrainingCompleted:
    losses = [point.loss for point in report.curve if point.loss is not None]
    return TrainingCompleted(
        run_id=run_id, dataset_key=plan_key, checkpoint_key=f"{prefix}/checkpoint", metrics_key=metrics_key,
        examples=report.episodes_played, steps=len(report.curve),
        loss_first=losses[0] if losses else 0.0, loss_last=losses[-1] if losses else 0.0,
    )  # fmt: skip


def run(argv: Sequence[str] | None = None, settings: TrainerSettings | None = None) -> GrpoReport:
    args = parse_args(argv)
    settings = settings or TrainerSettings()
    store = make_store(settings)
    trainer = json.loads(args.trainer_config.read_text() or "{}") if args.trainer_config.is_file() else {}
    deepspeed = json.loads(args.deepspeed_config.read_text() or "{}") if args.deepspeed_config.is_file() else {}
    plan = read_plan(store, args.dataset_key)
    rank0 = int(os.environ.get("RANK", "0")) == 0
    prefix = args.output_prefix.rstrip("/")
    # once the policy is uploaded, a failure to clean up must not fail the job
    with tempfile.TemporaryDirectory(prefix="grpo-", ignore_cleanup_errors=True) as work:
        out_dir = Path(work) / "out"
        report = run_grpo(grpo_options(plan, trainer, deepspeed, args.base_model, out_dir))
        if rank0:
            upload_dir(store, out_dir, f"{prefix}/checkpoint")
    if rank0:
        metrics_key = put_json(store, f"{prefix}/metrics.json", report.model_dump(mode="json"))
        run_id = os.environ.get("SKILLGYM_TRAINING_JOB") or prefix.rsplit("/", 1)[-1]
        bus = make_bus(settings)
        event = completed_event(report, run_id, args.dataset_key, prefix, metrics_key)
        publish_event(bus, Envelope.wrap(event, producer="trainer", correlation_id=settings.correlation_id),
                      settings.event_mode)
        bus.close()
    return report


def main(argv: Sequence[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
