"""A multi-step Harbor task served as RL episodes, in process on the real local sandbox: the
episode opens on the first step (its files merged, its setup run), each finish grades the current
step and opens the next one on the same workspace with its instruction, a step below its gate
ends the episode, and the stored rollout marks where each step's instruction was given."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core import keys
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.rlenv.api import EpisodeStatus, StartEpisode, StepRequest
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.base import get_json
from skillgym_core.store.local import LocalStore
from skillgym_core.taskrun import TaskRunner
from skillgym_envserver.catalog import TaskCatalog
from skillgym_envserver.curriculum import Curriculum
from skillgym_envserver.episodes import EpisodeManager
from skillgym_envserver.settings import EnvServerSettings
from skillgym_validator.harbor_import import import_tasks
from skillgym_validator.settings import ValidatorSettings

from tests.support.harbor_tasks import log_steps

COUNT = "grep -c '^ERROR' events.log > errors.txt"
SUMMARIZE = ("python3 -c 'import collections, json; json.dump(collections.Counter(l.split()[0] for l in "
             "open(\"events.log\")), open(\"summary.json\", \"w\"))'")


@pytest.fixture
def manager(tmp_path: Path) -> EpisodeManager:
    store = LocalStore(tmp_path / "store")
    [record] = import_tasks([log_steps(tmp_path / "log-steps")], store,
                            settings=ValidatorSettings(env_cache=tmp_path / "env-cache"))
    assert record["valid"], record
    settings = EnvServerSettings(state_dir=tmp_path / "state")
    catalog = TaskCatalog(store, settings.state_dir / "tasks", refresh_s=0)
    return EpisodeManager(settings, store, TaskRunner(LocalSandbox(), judge=None), catalog, Curriculum(),
                          lambda payload, correlation_id: None)


def _bash(manager: EpisodeManager, episode_id: str, command: str) -> str:
    return manager.step(episode_id, StepRequest(tool="bash", arguments={"command": command})).observation


def test_each_finish_grades_a_step_and_opens_the_next(manager: EpisodeManager) -> None:
    started = manager.start(StartEpisode(task_id="harbor-tests-log-steps", reward="rubric"))
    assert started.task_step == "count" and started.task_steps == ["count", "summarize"]
    assert "ERROR lines" in started.instruction and "grown" not in started.instruction
    assert started.workdir == "/workspace"
    assert all("/workspace" in tool["function"]["description"] for tool in started.tools)  # the tools name it too
    assert "events.log" in _bash(manager, started.episode_id, "pwd; ls; test ! -e setup.sh && echo no-setup")
    _bash(manager, started.episode_id, COUNT)
    first = manager.finish(started.episode_id)
    assert not first.done and first.passed and first.reward == 1.0 and first.task_step == "count"
    assert first.next_step == "summarize" and "grown" in (first.next_instruction or "")
    assert manager.state(started.episode_id).status is EpisodeStatus.OPEN
    assert manager.finish(started.episode_id) == first  # a retried finish does not grade the next step
    seen = _bash(manager, started.episode_id, "cat errors.txt; tail -1 events.log")
    assert "2" in seen and "WARN hot" in seen  # the same workspace, and the second step's setup ran
    _bash(manager, started.episode_id, SUMMARIZE)
    final = manager.finish(started.episode_id)
    assert final.done and final.passed and final.reward == 1.0
    assert [s["name"] for s in final.task_steps or []] == ["count", "summarize"]
    assert manager.finish(started.episode_id) == final

    trajectory = Trajectory.model_validate(get_json(manager.store, keys.trajectory_atif(final.trajectory_id)))
    assert validate_trajectory(trajectory).valid
    users = [s for s in trajectory.steps if s.source == "user"]
    assert len(users) == 2 and "grown" in str(users[1].message) and users[1].extra == {"task_step": "summarize"}


def test_a_step_below_its_gate_ends_the_episode(manager: EpisodeManager) -> None:
    started = manager.start(StartEpisode(task_id="harbor-tests-log-steps"))
    _bash(manager, started.episode_id, "echo 5 > errors.txt")
    result = manager.finish(started.episode_id)
    assert result.done and not result.passed and result.reward == 0.0
    assert result.failure_type == "step_below_min_reward" and result.next_instruction is None
    assert manager.state(started.episode_id).status is EpisodeStatus.FINISHED
