"""The pieces of a GRPO run around TRL: the dataset rows, the reward curve built from TRL's logs
and the episode log, and the ``train-rl`` command that starts a run and prints its curve."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from skillgym_trainer.rl import grpo
from skillgym_trainer.rl.episodes import EpisodeLog, EpisodeRecord
from skillgym_trainer.rl.grpo import CurveRecorder, GrpoOptions, GrpoReport, build_dataset_rows, grpo_config

from skillgym import rl_commands


def _options(tmp_path: Path, **fields: Any) -> GrpoOptions:
    return GrpoOptions(env_url="http://127.0.0.1:1", task_ids=["task-a", "task-b"], out_dir=tmp_path, **fields)


def test_rows_cycle_through_the_tasks_and_carry_a_tool_prompt(tmp_path: Path) -> None:
    rows = build_dataset_rows(_options(tmp_path, steps=3, tasks_per_step=2))
    assert [row["task_id"] for row in rows] == ["task-a", "task-b"] * 3
    assert [message["role"] for message in rows[0]["prompt"]] == ["system", "user"]
    assert "tools" in rows[0]["prompt"][0]["content"]


def test_options_keep_rollout_groups_comparable_and_training_on_cpu_in_fp32(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="num_generations"):
        _options(tmp_path, num_generations=1)
    config = grpo_config(_options(tmp_path, num_generations=3, tasks_per_step=2, steps=5))
    assert (config.per_device_train_batch_size, config.num_generations, config.max_steps) == (6, 3, 5)
    assert (config.use_cpu, config.bf16, config.fp16, config.logging_steps, config.report_to) == (
        True, False, False, 1, [])  # fmt: skip
    assert "s3cret" not in repr(_options(tmp_path, env_token="s3cret"))


def test_each_logged_step_gets_its_rewards_and_the_episodes_finished_since(tmp_path: Path) -> None:
    episodes = EpisodeLog()
    recorder = CurveRecorder(episodes)
    episodes.add(EpisodeRecord(task_id="task-a", reward=1.0, passed=True))
    episodes.add(EpisodeRecord(task_id="task-a", reward=0.0))
    recorder.on_log(None, SimpleNamespace(global_step=1), None, logs={"reward": 0.5, "reward_std": 0.7, "loss": 0.1})
    episodes.add(EpisodeRecord(task_id="task-a", error="the episode could not be finished: HTTP 500"))
    recorder.on_log(None, SimpleNamespace(global_step=2), None, logs={"reward": float("nan"), "loss": 0.0})
    recorder.on_log(None, SimpleNamespace(global_step=2), None, logs={"train_runtime": 3.0})
    first, second = recorder.points
    assert (first.step, first.reward_mean, first.episodes, first.episodes_passed, first.failed_episodes) == (
        1, 0.5, 2, 1, 0)  # fmt: skip
    assert (second.step, second.reward_mean, second.episodes, second.failed_episodes) == (2, None, 0, 1)


def _report(played: int) -> GrpoReport:
    return GrpoReport(base_model="smollm2", task_ids=["task-a"], reward="binary", steps=1, curve=[],
                      episodes_played=played, episodes_passed=0, failed_episodes=2 - played, step_errors=0,
                      mean_reward=0.0 if played else None, wall_time_s=1.0, model_dir=None, episodes=[])  # fmt: skip


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    rl_commands.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_train_rl_runs_grpo_with_the_given_options_and_prints_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[GrpoOptions] = []

    def run(options: GrpoOptions) -> GrpoReport:
        seen.append(options)
        return _report(played=2)

    monkeypatch.setattr(grpo, "run_grpo", run)
    monkeypatch.setenv("SKILLGYM_ENVSERVER_TOKEN", "s3cret")
    args = _parse(["train-rl", "--env-url", "http://127.0.0.1:9", "--task", "task-a", "--task", "task-b",
                   "--steps", "3", "--out", str(tmp_path), "--reward", "shaped", "--json"])  # fmt: skip
    assert args.func(args) == 0
    [options] = seen
    assert (options.task_ids, options.steps, options.reward, options.base_model, options.env_token) == (
        ["task-a", "task-b"], 3, "shaped", "smollm2", "s3cret")  # fmt: skip
    assert json.loads(capsys.readouterr().out)["episodes_played"] == 2

    monkeypatch.setattr(grpo, "run_grpo", lambda options: _report(played=0))
    args = _parse(["train-rl", "--env-url", "http://127.0.0.1:9", "--task", "task-a", "--out", str(tmp_path)])
    assert args.func(args) == 1  # no episode produced a reward
