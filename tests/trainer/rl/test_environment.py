"""``SkillGymEnvironment`` as TRL drives it: reset per rollout, tool calls as steps, one reward
per rollout. The episode API is a local double with ``EnvClient``'s methods, so each failure of
the server can be staged; the real server is exercised in ``test_grpo_env_server.py``."""

from __future__ import annotations

import inspect
import logging
from typing import Any

import pytest
from skillgym_core.rlenv.api import (
    TOOL_SCHEMAS,
    EpisodeLimits,
    EpisodeStarted,
    FinishResult,
    StartEpisode,
    StepResult,
)
from skillgym_core.rlenv.client import EnvServerError
from skillgym_trainer.rl.environment import NO_EPISODE, STEP_LIMIT, SkillGymEnvironment
from skillgym_trainer.rl.episodes import EpisodeLog
from transformers.utils import get_json_schema


class ScriptedEpisodes:
    """Answers like the server: episodes ``ep-1``, ``ep-2``...; a step echoes its call; errors
    queued per method are raised by its next call."""

    def __init__(self, *, max_steps: int = 5, reward: float = 1.0, task_steps: int = 1) -> None:
        self.max_steps = max_steps
        self.reward = reward
        self.task_steps = task_steps
        self.started: list[StartEpisode] = []
        self.steps: list[tuple[str, str, Any]] = []
        self.finished: list[str] = []
        self.deleted: list[str] = []
        self.errors: dict[str, list[EnvServerError]] = {"start": [], "step": [], "finish": [], "delete": []}

    def _raise_queued(self, method: str) -> None:
        if self.errors[method]:
            raise self.errors[method].pop(0)

    def start(self, request: StartEpisode | None = None, **fields: Any) -> EpisodeStarted:
        self._raise_queued("start")
        request = request or StartEpisode(**fields)
        self.started.append(request)
        return EpisodeStarted(
            episode_id=f"ep-{len(self.started)}", task_id=request.task_id or "", instruction="Total the ledger.\n",
            tools=TOOL_SCHEMAS, limits=EpisodeLimits(max_steps=self.max_steps, step_timeout_s=10, ttl_s=60,
                                                     expires_at=0),
            skill_provided=request.skill_provided, skills_path="/skills" if request.skill_provided else None,
            reward=request.reward,
        )  # fmt: skip

    def step(self, episode_id: str, tool: str, arguments: dict[str, Any] | str) -> StepResult:
        self._raise_queued("step")
        self.steps.append((episode_id, tool, arguments))
        taken = sum(1 for step in self.steps if step[0] == episode_id)
        return StepResult(step=taken, observation=f"ran {tool} {arguments}", steps_left=self.max_steps - taken,
                          exit_code=3 if tool == "bash" else None)  # fmt: skip

    def finish(self, episode_id: str) -> FinishResult:
        self._raise_queued("finish")
        self.finished.append(episode_id)
        done = self.finished.count(episode_id) >= self.task_steps  # a multi-step task: one finish per step
        reward = self.reward if done else 1.0
        return FinishResult(episode_id=episode_id, task_id="task-a", trajectory_id=f"traj-{episode_id}",
                            reward=reward, passed=reward == 1.0, reward_mode="binary",
                            components={"verdict": reward}, rubric={}, steps=2, malformed_calls=0, done=done)  # fmt: skip

    def delete(self, episode_id: str) -> None:
        self._raise_queued("delete")
        self.deleted.append(episode_id)


@pytest.fixture
def episodes() -> ScriptedEpisodes:
    return ScriptedEpisodes()


@pytest.fixture
def env(episodes: ScriptedEpisodes) -> SkillGymEnvironment:
    return SkillGymEnvironment(episodes, reward="rubric", policy="grpo-test", skill_provided=True)


def test_reset_opens_an_episode_on_the_rows_task_and_returns_its_instruction(
    env: SkillGymEnvironment, episodes: ScriptedEpisodes
) -> None:
    text = env.reset(prompt=[{"role": "user", "content": "Solve it."}], task_id="task-a")
    assert text.startswith("\n\nTotal the ledger.")  # TRL appends it to the user message as is
    assert "/skills" in text
    assert (episodes.started[0].task_id, episodes.started[0].reward, episodes.started[0].policy) == (
        "task-a",
        "rubric",
        "grpo-test",
    )
    env.get_reward()
    assert "/skills" not in env.reset(task_id="task-b", skill_provided=False)
    assert episodes.started[1].skill_provided is False
    with pytest.raises(ValueError, match="task_id"):
        env.reset(prompt="no task")


def test_tool_calls_are_steps_and_return_the_observation(env: SkillGymEnvironment,
                                                         episodes: ScriptedEpisodes) -> None:  # fmt: skip
    env.reset(task_id="task-a")
    assert env.bash("ls -la") == "ran bash {'command': 'ls -la'}\n[exit code 3]"
    assert env.read_file("data.csv") == "ran read_file {'path': 'data.csv'}"
    assert env.write_file("out.txt", "42\n") == "ran write_file {'path': 'out.txt', 'content': '42\\n'}"
    env.bash(["not", "a", "string"])  # type: ignore[arg-type]  # the server judges the arguments, not the trainer
    assert [(tool, args) for _, tool, args in episodes.steps] == [
        ("bash", {"command": "ls -la"}),
        ("read_file", {"path": "data.csv"}),
        ("write_file", {"path": "out.txt", "content": "42\n"}),
        ("bash", {"command": ["not", "a", "string"]}),
    ]


def test_the_reward_is_finished_once_and_logged(env: SkillGymEnvironment, episodes: ScriptedEpisodes) -> None:
    env.reset(task_id="task-a")
    env.bash("true")
    assert env.get_reward() == 1.0
    assert env.get_reward() == 1.0
    assert episodes.finished == ["ep-1"]
    [record] = env.episode_log.records()
    assert (record.episode_id, record.trajectory_id, record.passed, record.components) == (
        "ep-1",
        "traj-ep-1",
        True,
        {"verdict": 1.0},
    )
    assert env.bash("ls") == NO_EPISODE  # after the reward the episode is closed


def test_a_multi_step_tasks_remaining_steps_are_graded_when_the_rollout_ends() -> None:
    episodes = ScriptedEpisodes(reward=0.5, task_steps=3)
    env = SkillGymEnvironment(episodes)
    env.reset(task_id="task-a")
    env.bash("true")
    assert env.get_reward() == 0.5  # the rolled-up reward of the last finish, not the first step's
    assert episodes.finished == ["ep-1", "ep-1", "ep-1"]


def test_a_failed_finish_leaves_the_rollout_unscored_and_is_counted(
    env: SkillGymEnvironment, episodes: ScriptedEpisodes, caplog: pytest.LogCaptureFixture
) -> None:
    episodes.errors["finish"].append(EnvServerError("POST /finish: HTTP 500", status=500))
    env.reset(task_id="task-a")
    with caplog.at_level(logging.WARNING):
        assert env.get_reward() is None
    summary = env.episode_log.summary()
    assert (summary.failed_episodes, summary.episodes_played, summary.mean_reward) == (1, 0, None)
    assert "episode failed" in caplog.text


def test_a_refused_start_gives_an_observation_and_no_reward(env: SkillGymEnvironment,
                                                            episodes: ScriptedEpisodes) -> None:  # fmt: skip
    episodes.errors["start"].append(EnvServerError("POST /v1/episodes: HTTP 503", status=503))
    assert env.reset(task_id="task-a") == "\n\n" + NO_EPISODE
    assert env.bash("ls") == NO_EPISODE
    assert episodes.steps == []
    assert env.get_reward() is None
    assert env.episode_log.summary().failed_episodes == 1


def test_a_closed_episode_or_a_server_failure_is_an_observation(env: SkillGymEnvironment,
                                                                episodes: ScriptedEpisodes) -> None:  # fmt: skip
    env.reset(task_id="task-a")
    episodes.errors["step"].append(EnvServerError("HTTP 409", status=409, detail="episode ep-1 is expired"))
    assert env.bash("ls") == "error: the environment refused the call: episode ep-1 is expired"
    detail = {"error": "EpisodeClosed", "reason": "episode_closed", "message": "episode ep-1 is finished"}
    episodes.errors["step"].append(EnvServerError("HTTP 409", status=409, detail=detail))
    assert env.bash("ls") == "error: the environment refused the call: episode ep-1 is finished"
    episodes.errors["step"].append(EnvServerError("POST /step: connection refused"))
    assert env.read_file("a").startswith("error: the environment could not run the call")
    assert env.episode_log.summary().step_errors == 1


def test_the_step_limit_ends_tool_use_without_a_server_call() -> None:
    episodes = ScriptedEpisodes(max_steps=2)
    env = SkillGymEnvironment(episodes)
    env.reset(task_id="task-a")
    env.bash("true")
    assert env.bash("true").endswith("[that was the last tool call this episode allows]")
    assert env.bash("true") == STEP_LIMIT
    assert len(episodes.steps) == 2


def test_an_unscored_rollout_is_deleted_at_the_next_reset_and_counted(env: SkillGymEnvironment,
                                                                      episodes: ScriptedEpisodes) -> None:  # fmt: skip
    env.reset(task_id="task-a")
    env.reset(task_id="task-a")
    assert episodes.deleted == ["ep-1"]
    assert env.episode_log.summary().failed_episodes == 1
    assert env.get_reward() == 1.0 and episodes.finished == ["ep-2"]


def test_instances_share_one_log() -> None:
    shared = EpisodeLog()
    for reward in (1.0, 0.0):
        env = SkillGymEnvironment(ScriptedEpisodes(reward=reward), log=shared)
        env.reset(task_id="task-a")
        env.get_reward()
    summary = shared.summary()
    assert (summary.episodes_played, summary.episodes_passed, summary.mean_reward) == (2, 1, 0.5)


def test_only_the_three_tools_are_exposed_with_documented_arguments(env: SkillGymEnvironment) -> None:
    # the members TRL turns into tools: public functions of the class other than reset and get_reward
    exposed = [name for name, _ in inspect.getmembers(SkillGymEnvironment, predicate=inspect.isfunction)
               if name not in ("reset", "get_reward") and not name.startswith("_")]  # fmt: skip
    assert exposed == ["bash", "read_file", "write_file"]
    schemas = {name: get_json_schema(getattr(env, name))["function"] for name in exposed}
    expected = {tool["function"]["name"]: tool["function"]["parameters"]["required"] for tool in TOOL_SCHEMAS}
    for name, schema in schemas.items():
        assert schema["parameters"]["required"] == expected[name]
        assert schema["description"]
        for parameter in schema["parameters"]["properties"].values():
            assert parameter["type"] == "string" and parameter["description"]
