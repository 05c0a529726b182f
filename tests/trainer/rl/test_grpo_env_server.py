"""GRPO against the real environment server (``skillgym serve-env`` as a process) serving a
validated task from a local store: the environment's tools reach the task's sandbox, rewards
are the verifier's, and a short SmolLM2 run on CPU scores every rollout by a finished episode
whose trajectory the server stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from skillgym_core import keys
from skillgym_core.store.local import LocalStore
from skillgym_trainer.commands import resolve_base_model
from skillgym_trainer.rl.environment import SkillGymEnvironment
from skillgym_trainer.rl.grpo import REPORT_FILE, GrpoOptions, run_grpo
from skillgym_trainer.rl.template import use_tool_template
from transformers import AutoTokenizer, PreTrainedTokenizerBase

from tests.support.env_server import EnvServerProcess, start_env_server
from tests.support.validated_tasks import REFERENCE_COMMANDS, publish_validated

pytestmark = pytest.mark.slow
TASK = "task-ledger0001"


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    publish_validated(LocalStore(tmp_path / "store"), tmp_path / "tasks", TASK)
    return tmp_path / "store"


@pytest.fixture
def server(tmp_path: Path, store_root: Path) -> Iterator[EnvServerProcess]:
    with start_env_server(tmp_path / "server", store_root) as process:
        yield process


def test_rewards_come_from_the_verifier_through_the_environment_tools(server: EnvServerProcess) -> None:
    solver = SkillGymEnvironment(server.base_url, policy="reference")
    assert "ledger.csv" in solver.reset(task_id=TASK)
    for command in REFERENCE_COMMANDS:
        observation = solver.bash(command)
        assert observation.count("[exit code 0]") == 1
    assert observation.splitlines()[0].strip() == "42"
    assert solver.get_reward() == 1.0

    idle = SkillGymEnvironment(server.base_url, policy="idle")
    idle.reset(task_id=TASK)
    assert idle.get_reward() == 0.0
    records = [*solver.episode_log.records(), *idle.episode_log.records()]
    assert [(record.passed, record.failed) for record in records] == [(True, False), (False, False)]


def forced_reply(tokenizer: PreTrainedTokenizerBase, reply: str) -> list[list[Any]]:
    """``sequence_bias`` that makes sampling write ``reply`` as the assistant's first turn, then
    end the turn after the tool's answer: the untrained model rarely calls a tool on its own,
    and this run is about what happens to a call, not about the model."""
    turn_start = tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    after_tool = tokenizer("</tool_response><|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    target = tokenizer(reply + "<|im_end|>", add_special_tokens=False)["input_ids"]
    bias: list[list[Any]] = [[turn_start + target[: k + 1], 100.0] for k in range(len(target))]
    return [*bias, [[*after_tool, tokenizer.eos_token_id], 200.0]]


def test_a_short_grpo_run_scores_every_rollout_by_a_finished_episode(
    tmp_path: Path, server: EnvServerProcess, store_root: Path
) -> None:
    steps, generations = 2, 2
    model_dir, _ = resolve_base_model("smollm2")
    tokenizer = use_tool_template(AutoTokenizer.from_pretrained(model_dir), "qwen2_5")
    call = '<tool_call>\n{"name": "bash", "arguments": {"command": "echo 42 > total.txt"}}\n</tool_call>'
    options = GrpoOptions(
        env_url=server.base_url,
        task_ids=[TASK],
        out_dir=tmp_path / "grpo",
        steps=steps,
        num_generations=generations,
        max_completion_length=64,
        max_tool_calls=1,
        save_model=False,
        policy="grpo-test",
        generation_kwargs={"sequence_bias": forced_reply(tokenizer, call)},
    )
    report = run_grpo(options)

    assert [point.step for point in report.curve] == list(range(1, steps + 1))
    assert [point.tool_calls_per_rollout for point in report.curve] == [1.0] * steps
    # the call ran in the task's sandbox and its result was judged by the task's verifier
    assert [point.reward_mean for point in report.curve] == [1.0] * steps
    assert (report.episodes_played, report.episodes_passed, report.failed_episodes) == (steps * generations,) * 2 + (0,)
    store = LocalStore(store_root)
    for record in report.episodes:
        assert record.reward == 1.0 and record.steps == 1 and record.trajectory_id
        stored = json.loads(store.get_bytes(keys.trajectory_atif(record.trajectory_id)))
        assert stored["agent"]["model_name"] == "grpo-test"
        assert stored["steps"][1]["tool_calls"][0]["arguments"] == {"command": "echo 42 > total.txt"}
    written = json.loads((tmp_path / "grpo" / REPORT_FILE).read_text())
    assert len(written["curve"]) == steps and written["episodes_played"] == steps * generations
