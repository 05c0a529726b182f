"""The trainer service: records passed trajectories as chat examples and, once enough new
ones arrived (or when asked), exports a dataset and fine-tunes the student on it."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skillgym_core import keys
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.contracts.events import Envelope, Payload, TrainingCompleted, TrajectoryVerified
from skillgym_core.contracts.topics import TRAJECTORY_VERIFIED
from skillgym_core.errors import ContractError
from skillgym_core.hidden_paths import hidden_paths_in
from skillgym_core.ids import content_id
from skillgym_core.provenance import source_of_harness, trajectory_source
from skillgym_core.store.base import get_json, put_json

from skillgym_trainer.curation.hidden import HIDDEN_PATH_REFERENCE
from skillgym_trainer.export.chat import atif_to_chat
from skillgym_trainer.launcher import KubernetesLauncher, Launcher, TrainingRequest
from skillgym_trainer.settings import TrainerSettings
from skillgym_trainer.sft.loop import SFTConfig
from skillgym_trainer.sft.run import RunSpec, run_sft

log = logging.getLogger(__name__)

STATE = "state/trainer"


def _example_key(trajectory_id: str) -> str:
    return f"{STATE}/examples/{trajectory_id}.json"


def _rejected_key(trajectory_id: str) -> str:
    return f"{STATE}/rejected/{trajectory_id}.json"


def _trained_key(trajectory_id: str) -> str:
    return f"{STATE}/trained/{trajectory_id}.json"


class TrainerService:
    name = "trainer"
    consumes = (TRAJECTORY_VERIFIED,)

    def __init__(self, ctx: ServiceContext, settings: TrainerSettings | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or TrainerSettings()
        self.launcher_factory: Callable[[], Launcher] = lambda: KubernetesLauncher(self.settings)

    # -- events -----------------------------------------------------------------------
    def handle(self, event: Envelope) -> Sequence[Payload]:
        verified: TrajectoryVerified = event.payload_as(TrajectoryVerified)
        if not verified.passed or verified.reward < self.settings.min_reward:
            return []
        if not self.settings.include_reference and source_of_harness(verified.harness) == "reference":
            return []
        if not self.record(verified):
            return []
        threshold = self.settings.min_new_examples
        if threshold <= 0 or len(self.pending_ids()) < threshold:
            return []
        if self.settings.launcher == "kubernetes":
            self.submit_now()
            return []
        completed = self.train_now()
        return [completed] if completed is not None else []

    def record(self, verified: TrajectoryVerified) -> bool:
        """Store the chat example of a passed run once; False if it was already recorded."""
        key = _example_key(verified.trajectory_id)
        if self.ctx.store.exists(key):
            return False
        try:
            trajectory = Trajectory.model_validate_json(self.ctx.store.get_bytes(verified.atif_key))
        except ValueError as exc:
            raise ContractError("stored trajectory is not valid ATIF", key=verified.atif_key, error=str(exc)) from exc
        hidden = hidden_paths_in(trajectory.model_dump(mode="json", exclude_none=True))
        if hidden:
            rejected = {"trajectory_id": verified.trajectory_id, "reason": HIDDEN_PATH_REFERENCE, "paths": hidden}
            put_json(self.ctx.store, _rejected_key(verified.trajectory_id), rejected)
            log.warning("trajectory names hidden paths; not recorded", extra=rejected)
            return False
        source = trajectory_source(trajectory, verified.harness)
        example = {**atif_to_chat(trajectory), "source": source}
        put_json(self.ctx.store, key, {"event": verified.model_dump(mode="json"), "example": example})
        return True

    # -- state ------------------------------------------------------------------------
    def recorded_ids(self) -> list[str]:
        prefix = f"{STATE}/examples/"
        return [key[len(prefix) : -len(".json")] for key in self.ctx.store.list(prefix)]

    def pending_ids(self) -> list[str]:
        return [tid for tid in self.recorded_ids() if not self.ctx.store.exists(_trained_key(tid))]

    # -- training ---------------------------------------------------------------------
    def run_spec(self) -> RunSpec:
        s = self.settings
        return RunSpec(
            base_model=s.base_model,
            gguf_file=s.gguf_file,
            tokens_per_batch=s.seq_len,
            max_example_tokens=s.max_example_tokens,
            sft=SFTConfig(
                max_steps=s.max_steps,
                learning_rate=s.learning_rate,
                micro_batches_per_step=s.rows_per_step,
                seed=s.seed,
            ),
        )

    def _prepare(self) -> tuple[list[str], list[dict[str, Any]], str, str, RunSpec] | None:
        ids = self.recorded_ids()
        if not ids:
            return None
        records = {tid: get_json(self.ctx.store, _example_key(tid)) for tid in ids}
        if not self.settings.include_reference:
            ids = [tid for tid in ids if records[tid]["example"].get("source") != "reference"]
            if not ids:
                return None
        examples: list[dict[str, Any]] = [records[tid]["example"] for tid in ids]
        spec = self.run_spec()
        dataset_id = content_id("ds", ids)
        dataset_key = self._export_dataset(dataset_id, ids, examples)
        run_id = content_id("run", {"dataset": dataset_id, "spec": repr(spec)})
        return ids, examples, dataset_key, run_id, spec

    def _mark_trained(self, ids: list[str], run_id: str) -> None:
        for tid in ids:
            if not self.ctx.store.exists(_trained_key(tid)):
                put_json(self.ctx.store, _trained_key(tid), {"run_id": run_id})

    def submit_now(self, launcher: Launcher | None = None) -> str | None:
        """Hand a run over everything recorded to the cluster (a ``TrainingJob``)."""
        prepared = self._prepare()
        if prepared is None:
            return None
        ids, _, dataset_key, run_id, spec = prepared
        launcher = launcher or self.launcher_factory()
        trainer_config = {
            "max_steps": spec.sft.max_steps,
            "learning_rate": spec.sft.learning_rate,
            "tokens_per_batch": spec.tokens_per_batch,
            "max_example_tokens": spec.max_example_tokens,
            "micro_batches_per_step": spec.sft.micro_batches_per_step,
            "seed": spec.sft.seed,
            "gguf_file": spec.gguf_file,
        }
        where = launcher.submit(
            TrainingRequest(run_id, dataset_key, spec.base_model, trainer_config, self.settings.zero_stage)
        )
        self._mark_trained(ids, run_id)
        return where

    def train_now(self) -> TrainingCompleted | None:
        """Train on every recorded example in this process; None when there is nothing to train on."""
        prepared = self._prepare()
        if prepared is None:
            return None
        ids, examples, dataset_key, run_id, spec = prepared
        done_key = keys.training_run(run_id, "completed.json")
        if self.ctx.store.exists(done_key):
            completed = TrainingCompleted.model_validate(get_json(self.ctx.store, done_key))
        else:
            completed = self._train(run_id, dataset_key, examples, spec)
            put_json(self.ctx.store, done_key, completed.model_dump(mode="json"))
        self._mark_trained(ids, run_id)
        return completed

    def _export_dataset(self, dataset_id: str, ids: list[str], examples: list[dict[str, Any]]) -> str:
        lines = "".join(json.dumps(example, ensure_ascii=False) + "\n" for example in examples)
        key = keys.dataset(dataset_id, "chat.jsonl")
        self.ctx.store.put_bytes(key, lines.encode(), "application/x-ndjson")
        put_json(
            self.ctx.store,
            keys.dataset(dataset_id, "manifest.json"),
            {"dataset_id": dataset_id, "trajectory_ids": ids, "examples": len(examples), "format": "openai-chat",
             "sources": dict(Counter(str(example.get("source", "model")) for example in examples))},
        )
        return key

    def _train(self, run_id: str, dataset_key: str, examples: list[dict[str, Any]], spec: RunSpec) -> TrainingCompleted:
        scratch = self.ctx.scratch / "trainer"
        scratch.mkdir(parents=True, exist_ok=True)
        out_dir = Path(tempfile.mkdtemp(prefix=f"{run_id}-", dir=scratch))
        try:
            result = run_sft(examples, spec, out_dir, cache_dir=scratch / "cache")
            for path in sorted(out_dir.rglob("*")):
                if path.is_file() and path.name != "metrics.json":
                    rel = path.relative_to(out_dir).as_posix()
                    self.ctx.store.put_bytes(keys.training_run(run_id, f"checkpoint/{rel}"), path.read_bytes())
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
        metrics_key = keys.training_run(run_id, "metrics.json")
        put_json(self.ctx.store, metrics_key, result.to_dict() | {"run_id": run_id, "dataset_key": dataset_key})
        log.info("training finished", extra={"run_id": run_id, "loss_last": result.loss_last})
        return TrainingCompleted(
            run_id=run_id,
            dataset_key=dataset_key,
            checkpoint_key=keys.training_run(run_id, "checkpoint"),
            metrics_key=metrics_key,
            examples=len(examples),
            steps=len(result.steps),
            loss_first=result.loss_first,
            loss_last=result.loss_last,
        )
