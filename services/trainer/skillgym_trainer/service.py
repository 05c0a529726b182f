"""The trainer service: records passed trajectories as chat examples and, once enough new
ones arrived (or when asked), exports a dataset and fine-tunes the student on it.

Starting a run is made recoverable by the run ledger (:mod:`skillgym_trainer.runs`): the intent
to train a dataset is stored before training starts, and every handled event first finishes the
runs left open, so a trainer killed mid-run resumes that run (from its last mirrored checkpoint)
and announces ``training-completed`` for it exactly once."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillgym_core import keys
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.contracts.events import Envelope, Payload, TrainingCompleted, TrajectoryVerified
from skillgym_core.contracts.topics import TRAJECTORY_VERIFIED
from skillgym_core.errors import ContractError, TransientError
from skillgym_core.hidden_paths import hidden_paths_in
from skillgym_core.ids import content_id
from skillgym_core.provenance import source_of_harness, trajectory_source
from skillgym_core.store.base import get_json, put_json

from skillgym_trainer.curation.hidden import HIDDEN_PATH_REFERENCE
from skillgym_trainer.export.chat import atif_to_chat
from skillgym_trainer.launcher import KubernetesLauncher, Launcher, TrainingRequest
from skillgym_trainer.runs import FAILURE_LIMIT, RunIntent, RunLedger, spec_to_dict
from skillgym_trainer.settings import TrainerSettings
from skillgym_trainer.sft import checkpoint as ckpt
from skillgym_trainer.sft.loop import SFTConfig, TrainResult
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
        self.runs = RunLedger(ctx.store)
        self.launcher_factory: Callable[[], Launcher] = lambda: KubernetesLauncher(self.settings)
        self.run_training: Callable[..., TrainResult] = run_sft

    # -- events -----------------------------------------------------------------------
    def handle(self, event: Envelope) -> Sequence[Payload]:
        verified: TrajectoryVerified = event.payload_as(TrajectoryVerified)
        eligible = self._eligible(verified)
        if eligible:
            self.record(verified)
        outputs: list[Payload] = list(self.advance_open_runs(announcing=event.event_id))
        # An example recorded before is no reason to stop here: a redelivered event is the one whose
        # handling was cut short, maybe between recording it and planning its run.
        threshold = self.settings.min_new_examples
        if eligible and threshold > 0 and len(self.pending_ids()) >= threshold:
            intent = self.plan_run(self.settings.launcher)
            if intent is not None:
                outputs.extend(self._advance(intent, announcing=event.event_id))
        return outputs

    def _eligible(self, verified: TrajectoryVerified) -> bool:
        if not verified.passed or verified.reward < self.settings.min_reward:
            return False
        return self.settings.include_reference or source_of_harness(verified.harness) != "reference"

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

    def _mark_trained(self, ids: list[str], run_id: str) -> None:
        for tid in ids:
            if not self.ctx.store.exists(_trained_key(tid)):
                put_json(self.ctx.store, _trained_key(tid), {"run_id": run_id})

    # -- runs -------------------------------------------------------------------------
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

    def plan_run(self, launcher: str) -> RunIntent | None:
        """The run over everything recorded: its dataset exported and its intent stored (once
        per dataset and spec; a planned run is returned as it stands). None: nothing recorded."""
        ids = self.recorded_ids()
        if not ids:
            return None
        records = {tid: get_json(self.ctx.store, _example_key(tid)) for tid in ids}
        if not self.settings.include_reference:
            ids = [tid for tid in ids if records[tid]["example"].get("source") != "reference"]
            if not ids:
                return None
        spec = self.run_spec()
        dataset_id = content_id("ds", ids)
        run_id = content_id("run", {"dataset": dataset_id, "spec": repr(spec)})
        planned = self.runs.get(run_id)
        if planned is not None:
            return planned
        dataset_key = self._export_dataset(dataset_id, ids, [records[tid]["example"] for tid in ids])
        intent = RunIntent(
            run_id=run_id,
            dataset_id=dataset_id,
            dataset_key=dataset_key,
            trajectory_ids=ids,
            launcher="kubernetes" if launcher == "kubernetes" else "inprocess",
            spec=spec_to_dict(spec),
        )
        return self.runs.save(intent)

    def advance_open_runs(self, announcing: str) -> list[TrainingCompleted]:
        """Carry every open run one step on: train (or resume) the due ones, and return the
        completions not yet announced, to be emitted with the event ``announcing``."""
        return [completed for intent in self.runs.open_runs() for completed in self._advance(intent, announcing)]

    def _advance(self, intent: RunIntent, announcing: str) -> list[TrainingCompleted]:
        if intent.state == "due":
            intent = self._start(intent)
        if intent.state != "trained":
            return []
        carrier = intent.announced_by
        if carrier is not None and self.ctx.store.exists(keys.event_done(self.name, carrier)):
            self.runs.save(intent, state="announced")
            return []
        # Until the carrying event is recorded as done, its outputs may never have been published:
        # announce again (the same content-derived event id, so consumers see it once).
        self.runs.save(intent, announced_by=announcing)
        return [self._completion(intent.run_id)]

    def _start(self, intent: RunIntent, launcher: Launcher | None = None) -> RunIntent:
        """Submit or train a due run. Re-entrant: a crash in the middle leaves it due."""
        intent = self.runs.save(intent, attempts=intent.attempts + 1)
        if intent.attempts > 1:
            log.warning("training run started again", extra={"run_id": intent.run_id, "attempt": intent.attempts})
        try:
            if intent.launcher == "kubernetes":
                self._submit(intent, launcher or self.launcher_factory())
                self._mark_trained(intent.trajectory_ids, intent.run_id)
                return self.runs.save(intent, state="submitted")
            self._complete_in_process(intent)
        except TransientError:
            raise  # a dependency that is down: waited out by the worker, no failure of the run
        except Exception as exc:
            failures = intent.failures + 1
            state = "failed" if failures >= FAILURE_LIMIT else "due"
            self.runs.save(intent, failures=failures, state=state, error=f"{type(exc).__name__}: {exc}"[:500])
            if state == "failed":
                log.error("training run failed; not retried", extra={"run_id": intent.run_id, "failures": failures})
            raise
        return self.runs.save(intent, state="trained")

    def _completion(self, run_id: str) -> TrainingCompleted:
        return TrainingCompleted.model_validate(get_json(self.ctx.store, keys.training_run(run_id, "completed.json")))

    def submit_now(self, launcher: Launcher | None = None) -> str | None:
        """Hand a run over everything recorded to the cluster (a ``TrainingJob``); its run id."""
        intent = self.plan_run("kubernetes")
        if intent is None:
            return None
        if intent.state == "due":
            self._start(intent, launcher)
        return intent.run_id

    def train_now(self) -> TrainingCompleted | None:
        """Train on every recorded example in this process, after finishing the runs an earlier
        process left due; None when there is nothing to train on. The caller publishes the result."""
        for open_run in self.runs.open_runs():
            if open_run.state == "due":
                self._start(open_run)
        intent = self.plan_run("inprocess")
        if intent is None:
            return None
        if intent.state == "due":
            intent = self._start(intent)
        completed = self._complete_in_process(intent)
        if intent.state in ("trained", "failed"):
            self.runs.save(intent, state="announced")
        return completed

    def _submit(self, intent: RunIntent, launcher: Launcher) -> str:
        spec = intent.run_spec()
        trainer_config = {
            "max_steps": spec.sft.max_steps,
            "learning_rate": spec.sft.learning_rate,
            "tokens_per_batch": spec.tokens_per_batch,
            "max_example_tokens": spec.max_example_tokens,
            "micro_batches_per_step": spec.sft.micro_batches_per_step,
            "seed": spec.sft.seed,
            "gguf_file": spec.gguf_file,
            "checkpoint_every": self.settings.checkpoint_every,
        }
        return launcher.submit(
            TrainingRequest(intent.run_id, intent.dataset_key, spec.base_model, trainer_config, self.settings.zero_stage)
        )

    def _complete_in_process(self, intent: RunIntent) -> TrainingCompleted:
        """Train the run here unless it completed already (a crash after training but before the
        ledger was updated must not train it again)."""
        done_key = keys.training_run(intent.run_id, "completed.json")
        if self.ctx.store.exists(done_key):
            completed = self._completion(intent.run_id)
        else:
            completed = self._train(intent)
            put_json(self.ctx.store, done_key, completed.model_dump(mode="json"))
            for key in list(self.ctx.store.list(keys.training_run(intent.run_id, "checkpoints/"))):
                self.ctx.store.delete(key)
        self._mark_trained(intent.trajectory_ids, intent.run_id)
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

    def _train(self, intent: RunIntent) -> TrainingCompleted:
        """Run SFT on the intent's dataset, mirroring checkpoints to the store and resuming from
        the last one mirrored by an interrupted attempt."""
        run_id, store = intent.run_id, self.ctx.store
        lines = store.get_bytes(intent.dataset_key).decode().splitlines()
        examples: list[dict[str, Any]] = [json.loads(line) for line in lines if line.strip()]
        spec = replace(intent.run_spec(), checkpoint_every=self.settings.checkpoint_every, resume=True)
        checkpoints = keys.training_run(run_id, "checkpoints")
        scratch = self.ctx.scratch / "trainer"
        scratch.mkdir(parents=True, exist_ok=True)
        out_dir = Path(tempfile.mkdtemp(prefix=f"{run_id}-", dir=scratch))
        try:
            resumed_at = ckpt.download_latest_checkpoint(store, checkpoints, out_dir / "checkpoints")
            if resumed_at is not None:
                log.info("resuming from checkpoint", extra={"run_id": run_id, "step": resumed_at})
            result = self.run_training(
                examples,
                spec,
                out_dir,
                scratch / "cache",
                on_checkpoint=lambda directory: ckpt.mirror_checkpoint(store, directory, checkpoints),
            )
            for path in sorted(out_dir.rglob("*")):
                rel = path.relative_to(out_dir).as_posix()
                if path.is_file() and rel != "metrics.json" and not rel.startswith("checkpoints/"):
                    store.put_bytes(keys.training_run(run_id, f"checkpoint/{rel}"), path.read_bytes())
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
        metrics_key = keys.training_run(run_id, "metrics.json")
        put_json(store, metrics_key, result.to_dict() | {"run_id": run_id, "dataset_key": intent.dataset_key})
        log.info("training finished", extra={"run_id": run_id, "loss_last": result.loss_last})
        earlier = result.history  # the steps trained before an interruption
        return TrainingCompleted(
            run_id=run_id,
            dataset_key=intent.dataset_key,
            checkpoint_key=keys.training_run(run_id, "checkpoint"),
            metrics_key=metrics_key,
            examples=len(examples),
            steps=len(earlier) + len(result.steps),
            loss_first=float(str(earlier[0]["loss"])) if earlier else result.loss_first,
            loss_last=result.loss_last,
        )
