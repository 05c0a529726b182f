"""GRPO on validated tasks served by the environment server: TRL generates each rollout with the
episode's tools, the server runs the calls in the task's sandbox, and the reward is the trusted
verifier's, taken when the rollout ends. Writes the reward curve to ``OUT/reward_curve.json``."""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from skillgym_core.rlenv.api import RewardMode
from skillgym_core.rlenv.client import EnvClient, EnvServerError
from transformers import TrainerCallback

from skillgym_trainer.errors import TrainingError
from skillgym_trainer.rl.environment import SkillGymEnvironment
from skillgym_trainer.rl.episodes import EpisodeLog, EpisodeRecord
from skillgym_trainer.rl.template import ChatTemplateName, load_policy

log = logging.getLogger(__name__)

REPORT_FILE = "reward_curve.json"
SYSTEM_PROMPT = (
    "You are an agent working in a Linux workspace at /app. Solve the user's task by calling the tools: "
    "look at the files, run commands, write the results the task asks for. When the task is done, reply "
    "with one short sentence and no tool call."
)
USER_PROMPT = "Solve this task with the tools."


class GrpoOptions(BaseModel):
    env_url: str
    task_ids: list[str] = Field(min_length=1)
    out_dir: Path
    base_model: str = "smollm2"
    steps: int = Field(10, ge=1)
    reward: RewardMode = "binary"
    skill_provided: bool = True
    policy: str | None = Field(None, description="the name the server records rollouts under (default: grpo-BASE)")
    env_token: str | None = Field(None, repr=False, exclude=True)
    num_generations: int = Field(2, ge=2, description="rollouts per task per step, compared with each other")
    tasks_per_step: int = Field(1, ge=1)
    max_completion_length: int = Field(256, ge=8, description="tokens of one rollout, tool results included")
    max_tool_calls: int = Field(4, ge=1, description="tool-calling rounds of one rollout")
    max_episode_steps: int | None = Field(None, ge=1, le=1000)
    learning_rate: float = Field(1e-6, gt=0)
    temperature: float = Field(1.0, gt=0)
    seed: int = 0
    chat_template: ChatTemplateName = "qwen2_5"
    device: Literal["cpu", "auto"] = "cpu"
    gradient_checkpointing: bool = Field(False, description="recompute activations: less memory, slower steps")
    bf16: bool = Field(False, description="bfloat16 training (GPUs); CPU runs stay fp32")
    deepspeed: dict[str, Any] | None = Field(None, description="a DeepSpeed config for multi-GPU runs")
    generation_kwargs: dict[str, Any] | None = Field(None, description="extra sampling settings for generate()")
    preflight: bool = Field(True, description="open and delete one episode per task before training")
    save_model: bool = True
    progress: bool = False


class CurvePoint(BaseModel):
    step: int
    reward_mean: float | None
    reward_std: float | None
    loss: float | None
    episodes: int
    episodes_passed: int
    failed_episodes: int
    tool_calls_per_rollout: float | None = None
    completion_length: float | None = None
    step_time_s: float | None = None


class GrpoReport(BaseModel):
    base_model: str
    task_ids: list[str]
    reward: RewardMode
    steps: int
    curve: list[CurvePoint]
    episodes_played: int
    episodes_passed: int
    failed_episodes: int
    step_errors: int
    mean_reward: float | None
    wall_time_s: float
    model_dir: str | None
    episodes: list[EpisodeRecord]


def build_dataset_rows(options: GrpoOptions) -> list[dict[str, Any]]:
    """One row per rollout group: the prompt, completed by each episode's instruction in ``reset``."""
    prompt = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": USER_PROMPT}]
    count = max(len(options.task_ids), options.tasks_per_step * options.steps)
    return [{"prompt": prompt, "task_id": options.task_ids[i % len(options.task_ids)]} for i in range(count)]


def grpo_config(options: GrpoOptions) -> Any:
    from trl import GRPOConfig

    # transformers 5.x renamed gradient_checkpointing (TRL's default: on) and warns on the old name
    renamed = "activation_checkpointing" in {field.name for field in dataclasses.fields(GRPOConfig)}
    checkpointing: dict[str, Any] = {
        "activation_checkpointing" if renamed else "gradient_checkpointing": options.gradient_checkpointing
    }
    return GRPOConfig(
        output_dir=str(options.out_dir / "trainer"),
        max_steps=options.steps,
        num_generations=options.num_generations,
        per_device_train_batch_size=options.num_generations * options.tasks_per_step,
        max_completion_length=options.max_completion_length,
        max_tool_calling_iterations=options.max_tool_calls,
        learning_rate=options.learning_rate,
        temperature=options.temperature,
        seed=options.seed,
        use_cpu=options.device == "cpu",
        bf16=options.bf16,
        fp16=False,
        deepspeed=options.deepspeed,
        **checkpointing,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        disable_tqdm=not options.progress,
        dataloader_num_workers=0,
        generation_kwargs=options.generation_kwargs,
    )


def run_grpo(options: GrpoOptions) -> GrpoReport:
    from datasets import Dataset
    from trl import GRPOTrainer

    options.out_dir.mkdir(parents=True, exist_ok=True)
    policy_name = options.policy or f"grpo-{Path(options.base_model).name}"
    episodes = EpisodeLog()
    curve = CurveRecorder(episodes)
    model_dir = None
    with EnvClient(options.env_url, token=options.env_token) as client:
        if options.preflight:
            _check_tasks(client, options, policy_name)
        model, tokenizer, base_dir = load_policy(options.base_model, options.chat_template)

        def make_environment() -> SkillGymEnvironment:
            return SkillGymEnvironment(client, reward=options.reward, skill_provided=options.skill_provided,
                                       policy=policy_name, max_steps=options.max_episode_steps, log=episodes)  # fmt: skip

        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            args=grpo_config(options),
            train_dataset=Dataset.from_list(build_dataset_rows(options)),
            environment_factory=make_environment,
            callbacks=[curve],
        )
        started = time.monotonic()
        trainer.train()
        wall_time_s = time.monotonic() - started
    if options.save_model:
        model_dir = str(options.out_dir / "model")
        trainer.save_model(model_dir)
        tokenizer.save_pretrained(model_dir)
    summary = episodes.summary()
    report = GrpoReport(
        base_model=base_dir, task_ids=options.task_ids, reward=options.reward, steps=options.steps,
        curve=curve.points, episodes_played=summary.episodes_played, episodes_passed=summary.episodes_passed,
        failed_episodes=summary.failed_episodes, step_errors=summary.step_errors, mean_reward=summary.mean_reward,
        wall_time_s=round(wall_time_s, 3), model_dir=model_dir, episodes=episodes.records(),
    )  # fmt: skip
    if report.failed_episodes:
        log.warning("%d of %d episodes failed on the environment server and were left unscored",
                    report.failed_episodes, len(report.episodes))  # fmt: skip
    (options.out_dir / REPORT_FILE).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return report


def _check_tasks(client: EnvClient, options: GrpoOptions, policy_name: str) -> None:
    """Fail before loading the model when the server is unreachable or refuses a task."""
    for task_id in dict.fromkeys(options.task_ids):
        try:
            started = client.start(task_id=task_id, reward=options.reward, skill_provided=options.skill_provided,
                                   policy=policy_name)  # fmt: skip
            client.delete(started.episode_id)
        except EnvServerError as exc:
            raise TrainingError(
                f"the environment server at {options.env_url} cannot serve task {task_id}: {exc}",
                reason="env_task_unavailable",
                task_id=task_id,
                status=exc.status,
            ) from exc


class CurveRecorder(TrainerCallback):
    """One curve point per logged optimizer step: TRL's reward statistics, and the episodes that
    finished since the previous point."""

    def __init__(self, episodes: EpisodeLog) -> None:
        self.episodes = episodes
        self.points: list[CurvePoint] = []
        self._seen = 0

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not logs or "reward" not in logs:
            return
        records = self.episodes.records()
        new, self._seen = records[self._seen :], len(records)
        summary = self.episodes.summary(new)
        self.points.append(CurvePoint(
            step=state.global_step,
            reward_mean=_number(logs.get("reward")),
            reward_std=_number(logs.get("reward_std")),
            loss=_number(logs.get("loss")),
            episodes=summary.episodes_played,
            episodes_passed=summary.episodes_passed,
            failed_episodes=summary.failed_episodes,
            tool_calls_per_rollout=_number(logs.get("tools/call_frequency")),
            completion_length=_number(logs.get("completions/mean_length")),
            step_time_s=_number(logs.get("step_time")),
        ))  # fmt: skip


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None
