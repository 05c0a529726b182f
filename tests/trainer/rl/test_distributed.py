"""A GRPO run as a ``TrainingJob``: the operator's pods run the GRPO entry module with arguments
it accepts, the rollout plan and options are checked before any model loads, and the finished
run is announced like any training run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore
from skillgym_operator import builders
from skillgym_operator.settings import OperatorSettings
from skillgym_operator.spec import parse_training_job
from skillgym_trainer.errors import DatasetError, TrainingError
from skillgym_trainer.launcher import GRPO_MODULE, grpo_request, training_job_manifest
from skillgym_trainer.rl import distributed
from skillgym_trainer.rl.distributed import completed_event, grpo_options, read_plan
from skillgym_trainer.rl.grpo import CurvePoint, GrpoOptions, GrpoReport
from skillgym_trainer.settings import TrainerSettings

PLAN = {"env_url": "http://envserver.skillgym.svc:8090", "task_ids": ["task-a", "task-b"]}


def test_the_operators_pods_run_the_grpo_module_with_arguments_it_accepts() -> None:
    from skillgym_trainer.distributed import parse_args

    request = grpo_request("grpo-1", "rl/plans/grpo-1.json", "smollm2", {"steps": 50, "num_generations": 8})
    manifest = training_job_manifest(request, "skillgym", None, gpus=4)
    spec = parse_training_job(manifest["spec"])
    job = {**manifest, "metadata": {**manifest["metadata"], "uid": "u-1"}}
    command = builders.training_job(job, spec, OperatorSettings())["spec"]["template"]["spec"]["containers"][0][
        "command"]
    assert command[0] == "torchrun" and command[command.index("-m") + 1] == GRPO_MODULE
    args = parse_args(command[command.index("-m") + 2 :])
    assert args.dataset_key == "rl/plans/grpo-1.json" and args.base_model == "smollm2"
    assert spec.trainer_config == {"steps": 50, "num_generations": 8}
    assert spec.deepspeed_config["bf16"]["enabled"] is True


def test_options_come_from_the_plan_the_trainer_config_and_deepspeed(tmp_path: Path) -> None:
    options = grpo_options(PLAN, {"steps": 50, "reward": "shaped"}, {"bf16": {"enabled": True}}, "smollm2", tmp_path)
    assert (options.task_ids, options.steps, options.reward) == (["task-a", "task-b"], 50, "shaped")
    assert options.bf16 and options.device == "auto" and options.deepspeed == {"bf16": {"enabled": True}}
    with pytest.raises(TrainingError, match="may not set env_url"):
        grpo_options(PLAN, {"env_url": "http://elsewhere"}, {}, "smollm2", tmp_path)
    with pytest.raises(TrainingError) as invalid:
        grpo_options(PLAN, {"num_generations": 1}, {}, "smollm2", tmp_path)
    assert invalid.value.reason == "grpo_config_invalid"


def test_a_missing_or_incomplete_plan_is_a_typed_error(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(DatasetError) as missing:
        read_plan(store, "rl/plans/none.json")
    assert missing.value.reason == "rollout_plan_missing"
    put_json(store, "rl/plans/bad.json", {"env_url": "http://x"})
    with pytest.raises(DatasetError) as bad:
        read_plan(store, "rl/plans/bad.json")
    assert bad.value.reason == "rollout_plan_invalid"
    put_json(store, "rl/plans/ok.json", {**PLAN, "note": "ignored"})
    assert read_plan(store, "rl/plans/ok.json") == PLAN


def _report() -> GrpoReport:
    points = [CurvePoint(step=1, reward_mean=0.0, reward_std=0.0, loss=None, episodes=8, episodes_passed=0,
                         failed_episodes=0),
              CurvePoint(step=2, reward_mean=0.5, reward_std=0.5, loss=0.03, episodes=8, episodes_passed=4,
                         failed_episodes=0)]  # fmt: skip
    return GrpoReport(base_model="smollm2", task_ids=["task-a"], reward="binary", steps=2, curve=points,
                      episodes_played=16, episodes_passed=4, failed_episodes=0, step_errors=0, mean_reward=0.25,
                      wall_time_s=10.0, model_dir=None, episodes=[])  # fmt: skip


def test_the_finished_run_is_announced_with_its_episodes_and_losses() -> None:
    report = _report()
    event = completed_event(report, "grpo-1", "rl/plans/grpo-1.json", "training/grpo-1", "training/grpo-1/metrics.json")
    assert (event.examples, event.steps, event.loss_first, event.loss_last) == (16, 2, 0.03, 0.03)
    assert event.checkpoint_key == "training/grpo-1/checkpoint"


def test_the_jobs_work_directory_is_removed_after_the_upload_and_after_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "store")
    put_json(store, "rl/plans/grpo-1.json", PLAN)
    settings = TrainerSettings(store="local", store_root=tmp_path / "store", bus="memory")
    argv = ["--dataset-key", "rl/plans/grpo-1.json", "--base-model", "smollm2", "--trainer-config",
            str(tmp_path / "none.json"), "--deepspeed-config", str(tmp_path / "none.json"),
            "--output-prefix", "training/grpo-1"]  # fmt: skip
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def trained(options: GrpoOptions) -> GrpoReport:
        options.out_dir.mkdir(parents=True)
        (options.out_dir / "model.safetensors").write_bytes(b"weights")
        return _report()

    monkeypatch.setattr(distributed, "run_grpo", trained)
    distributed.run(argv, settings)
    assert store.get_bytes("training/grpo-1/checkpoint/model.safetensors") == b"weights"
    assert list(scratch.iterdir()) == []

    def failed(options: GrpoOptions) -> GrpoReport:
        trained(options)
        raise TrainingError("the policy diverged")

    monkeypatch.setattr(distributed, "run_grpo", failed)
    with pytest.raises(TrainingError):
        distributed.run(argv, settings)
    assert list(scratch.iterdir()) == []
