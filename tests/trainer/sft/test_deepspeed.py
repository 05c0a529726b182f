"""DeepSpeed ZeRO-2 / ZeRO-3 on CPU (gloo) against the plain loop, and the TrainingJob entry point."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
import torch
from skillgym_core.store.local import LocalStore
from skillgym_trainer import distributed
from skillgym_trainer.curation.build import CurationConfig, build_dataset
from skillgym_trainer.distributed import parse_args, run
from skillgym_trainer.errors import TrainingError
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.settings import TrainerSettings
from skillgym_trainer.sft.deepspeed_engine import build_config, load_config
from skillgym_trainer.sft.loop import SFTConfig
from skillgym_trainer.sft.run import RunSpec, run_sft

from tests.trainer.factories import make_trajectory, populate

pytestmark = pytest.mark.slow

if not torch.cuda.is_available():
    os.environ.setdefault("DS_ACCELERATOR", "cpu")

EXAMPLES = [atif_to_chat(make_trajectory(i)) for i in range(8)]


def test_shipped_configs_have_no_optimizer() -> None:
    for stage in (2, 3):
        config = build_config(stage, micro_batches=4, max_grad_norm=0.5, bf16=False, world_size=2)
        assert config["zero_optimization"]["stage"] == stage and "optimizer" not in config
        assert config["train_batch_size"] == 8 and config["gradient_clipping"] == 0.5
    assert "optimizer" not in load_config(3)


def test_zero2_and_zero3_match_the_plain_loop(tmp_path: Path) -> None:
    curves = {}
    for engine in ("plain", "zero2", "zero3"):
        spec = RunSpec(
            tokens_per_batch=512,
            engine=engine,
            sft=SFTConfig(max_steps=5, micro_batches_per_step=2),
        )
        result = run_sft(EXAMPLES, spec, tmp_path / engine, tmp_path / "cache")
        curves[engine] = [step.loss for step in result.steps]
        assert (tmp_path / engine / "model.safetensors").is_file()
    assert curves["plain"][-1] < curves["plain"][0]
    for engine in ("zero2", "zero3"):
        assert curves[engine] == pytest.approx(curves["plain"], rel=1e-4, abs=1e-4)


def _job(tmp_path: Path) -> tuple[LocalStore, TrainerSettings, list[str]]:
    store = LocalStore(tmp_path / "store")
    populate(store)
    published = build_dataset(store, CurationConfig(eval_fraction=0.2))
    trainer_json = tmp_path / "trainer.json"
    deepspeed_json = tmp_path / "deepspeed.json"
    deepspeed_json.write_text(json.dumps(load_config(2)))
    settings = TrainerSettings(store="local", store_root=tmp_path / "store", bus="memory")
    argv = [
        "--dataset-key", f"datasets/{published.dataset_id}",
        "--base-model", "tiny",
        "--trainer-config", str(trainer_json),
        "--deepspeed-config", str(deepspeed_json),
        "--output-prefix", "training/job-1",
    ]  # fmt: skip
    return store, settings, argv


def _scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def test_training_job_entry_point_trains_mirrors_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, settings, argv = _job(tmp_path)
    trainer_json = tmp_path / "trainer.json"
    scratch = _scratch(tmp_path, monkeypatch)
    trainer_json.write_text(json.dumps({"max_steps": 4, "checkpoint_every": 2, "learning_rate": 3e-3}))
    first = run(parse_args(argv), settings)
    assert store.exists("training/job-1/checkpoint/model.safetensors")
    assert store.exists("training/job-1/checkpoints/step-2/trainer_state.json")
    assert first.eval_loss_after is not None
    assert not list(scratch.glob("training-*")), "the work directory goes once the model is uploaded"

    trainer_json.write_text(json.dumps({"max_steps": 6, "checkpoint_every": 2, "learning_rate": 3e-3}))
    resumed = run(parse_args([*argv, "--resume"]), settings)
    assert [step.step for step in resumed.steps] == [3, 4, 5, 6]
    assert [point["step"] for point in resumed.history] == [1, 2]
    metrics = json.loads(store.get_bytes("training/job-1/metrics.json"))
    assert metrics["resumed_from"][0]["step"] == 1
    assert not list(scratch.glob("training-*"))


def test_a_failed_training_job_leaves_no_work_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, settings, argv = _job(tmp_path)
    scratch = _scratch(tmp_path, monkeypatch)

    def diverged(rows: object, spec: RunSpec, out_dir: Path, *args: object, **kwargs: object) -> None:
        (out_dir / "checkpoints").mkdir(parents=True)
        raise TrainingError("loss is nan")

    monkeypatch.setattr(distributed, "run_sft", diverged)
    with pytest.raises(TrainingError):
        run(parse_args(argv), settings)
    assert list(scratch.iterdir()) == []
