"""Episodes in process, against the real local sandbox and a real store: the reference steps
earn reward 1 and doing nothing 0, every finished episode is stored as ATIF with its
verification record and published, limits hold, idle episodes expire, nothing is lost when the
broker is down, and a new manager resumes the open episodes of the last one."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core import keys
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.contracts.events import HardeningRequested, Payload, TrajectoryVerified
from skillgym_core.rlenv.api import EpisodeStatus, StartEpisode, StepRequest
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.base import get_json
from skillgym_core.store.local import LocalStore
from skillgym_core.taskrun import TaskRunner
from skillgym_envserver.catalog import TaskCatalog, TaskNotServable
from skillgym_envserver.curriculum import Curriculum
from skillgym_envserver.episodes import EpisodeClosed, EpisodeManager, ServerBusy, StepLimitReached
from skillgym_envserver.settings import EnvServerSettings

from tests.support.validated_tasks import REFERENCE_COMMANDS, publish_validated
from tests.support.waiting import wait_for

TASK = "task-ledger0001"


class Outbox:
    def __init__(self) -> None:
        self.events: list[Payload] = []
        self.down = False

    def __call__(self, payload: Payload, correlation_id: str) -> None:
        if self.down:
            raise ConnectionError("broker unreachable")
        self.events.append(payload)


def _manager(tmp: Path, outbox: Outbox, **overrides: object) -> EpisodeManager:
    store = LocalStore(tmp / "store")
    settings = EnvServerSettings(state_dir=tmp / "state", **overrides)  # type: ignore[arg-type]
    catalog = TaskCatalog(store, settings.state_dir / "tasks", refresh_s=0)
    curriculum = Curriculum(min_episodes=settings.curriculum_min_episodes)
    return EpisodeManager(settings, store, TaskRunner(LocalSandbox()), catalog, curriculum, outbox)


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    publish_validated(LocalStore(tmp_path / "store"), tmp_path / "tasks")
    publish_validated(LocalStore(tmp_path / "store"), tmp_path / "tasks", "task-invalid01", valid=False)
    return tmp_path


def _solve(manager: EpisodeManager, episode_id: str) -> None:
    for command in REFERENCE_COMMANDS:
        assert manager.step(episode_id, StepRequest(tool="bash", arguments={"command": command})).exit_code == 0


def test_reference_steps_earn_one_and_the_rollout_is_stored_and_published(store_dir: Path) -> None:
    outbox = Outbox()
    manager = _manager(store_dir, outbox)
    started = manager.start(StartEpisode(task_id=TASK, policy="smollm2-grpo"))
    assert "ledger.csv" in started.instruction and started.skills_path == "/skills"
    _solve(manager, started.episode_id)
    result = manager.finish(started.episode_id)
    assert (result.reward, result.passed, result.steps) == (1.0, True, 3)
    assert manager.finish(started.episode_id) == result  # idempotent

    store = manager.store
    trajectory = Trajectory.model_validate(get_json(store, keys.trajectory_atif(result.trajectory_id)))
    assert validate_trajectory(trajectory).valid
    assert trajectory.extra and trajectory.extra["rollout"] == "rl" and trajectory.extra["source"] == "model"
    assert [s.tool_calls[0].arguments["command"] for s in trajectory.steps[1:] if s.tool_calls] == REFERENCE_COMMANDS
    record = VerificationRecord.model_validate(get_json(store, keys.trajectory_verification(result.trajectory_id)))
    assert record.passed and record.harness == "rl-env" and record.model == "smollm2-grpo"
    [event] = outbox.events
    assert isinstance(event, TrajectoryVerified) and event.prompt_variant == "rl-rollout" and event.passed
    wait_for(lambda: not Path(manager.state(started.episode_id).workspace).exists(), what="workspace removed")


def test_doing_nothing_earns_zero_and_tampering_cannot_earn_anything(store_dir: Path) -> None:
    manager = _manager(store_dir, Outbox())
    idle = manager.start(StartEpisode(task_id=TASK))
    assert manager.finish(idle.episode_id).reward == 0.0
    cheat = manager.start(StartEpisode(task_id=TASK, reward="shaped"))
    for command in ("printf 'item,amount\\nx,42\\n' > ledger.csv", "echo 42 > total.txt",
                    "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt"):
        manager.step(cheat.episode_id, StepRequest(tool="bash", arguments={"command": command}))
    result = manager.finish(cheat.episode_id)
    assert (result.reward, result.failure_type) == (0.0, "tampered_inputs")


def test_unknown_and_unvalidated_tasks_are_refused(store_dir: Path) -> None:
    manager = _manager(store_dir, Outbox())
    for task_id in ("task-nosuchtask", "task-invalid01"):
        with pytest.raises(TaskNotServable):
            manager.start(StartEpisode(task_id=task_id))


def test_limits_steps_time_output_and_writes(store_dir: Path) -> None:
    manager = _manager(store_dir, Outbox(), max_steps=4, step_timeout_s=2, max_observation_chars=400,
                       max_write_bytes=1000)
    episode = manager.start(StartEpisode(task_id=TASK)).episode_id
    slow = manager.step(episode, StepRequest(tool="bash", arguments={"command": "sleep 30"}))
    assert "ran past 2 s" in slow.observation
    loud = manager.step(episode, StepRequest(tool="bash", arguments={"command": "seq 1 100000"}))
    assert loud.truncated and len(loud.observation) < 500 and loud.observation.rstrip().endswith("[exit code 0]")
    big = manager.step(episode, StepRequest(tool="write_file", arguments={"path": "big.txt", "content": "x" * 2000}))
    assert "at most 1000" in big.observation
    manager.step(episode, StepRequest(tool="read_file", arguments={"path": "/etc/shadow"}))
    with pytest.raises(StepLimitReached):
        manager.step(episode, StepRequest(tool="bash", arguments={"command": "true"}))
    assert manager.finish(episode).steps == 4


def test_write_and_read_go_through_the_sandbox(store_dir: Path) -> None:
    manager = _manager(store_dir, Outbox())
    episode = manager.start(StartEpisode(task_id=TASK)).episode_id
    text = "line one\nüñí ✓\n"
    wrote = manager.step(episode, StepRequest(tool="write_file", arguments={"path": "out/notes.md", "content": text}))
    assert wrote.exit_code == 0
    assert manager.step(episode, StepRequest(tool="read_file", arguments={"path": "out/notes.md"})).observation == text
    escape = manager.step(episode, StepRequest(tool="write_file", arguments={"path": "/etc/passwd", "content": "x"}))
    assert escape.exit_code != 0
    owner = manager.step(episode, StepRequest(tool="bash", arguments={"command": "id -u; stat -c %u out/notes.md"}))
    uid, file_uid = owner.observation.split()[:2]
    assert uid != "0" and uid == file_uid


def test_capacity_is_back_pressure_not_failure(store_dir: Path) -> None:
    manager = _manager(store_dir, Outbox(), max_open_episodes=2)
    first = manager.start(StartEpisode(task_id=TASK))
    manager.start(StartEpisode(task_id=TASK))
    with pytest.raises(ServerBusy) as busy:
        manager.start(StartEpisode(task_id=TASK))
    assert busy.value.retryable
    manager.delete(first.episode_id)
    manager.start(StartEpisode(task_id=TASK))


def test_idle_episodes_expire_and_closed_ones_refuse_steps(store_dir: Path) -> None:
    manager = _manager(store_dir, Outbox())
    episode = manager.start(StartEpisode(task_id=TASK, ttl_s=5)).episode_id
    assert manager.sweep(now=manager.state(episode).last_active_at + 1) == 0
    assert manager.sweep(now=manager.state(episode).last_active_at + 6) == 1
    assert manager.state(episode).status is EpisodeStatus.EXPIRED
    with pytest.raises(EpisodeClosed):
        manager.step(episode, StepRequest(tool="bash", arguments={"command": "true"}))
    with pytest.raises(EpisodeClosed):
        manager.finish(episode)


def test_a_broker_outage_delays_events_and_loses_none(store_dir: Path) -> None:
    outbox = Outbox()
    outbox.down = True
    manager = _manager(store_dir, outbox)
    episode = manager.start(StartEpisode(task_id=TASK)).episode_id
    _solve(manager, episode)
    assert manager.finish(episode).passed
    assert outbox.events == []
    outbox.down = False
    manager.sweep()
    assert [type(e).__name__ for e in outbox.events] == ["TrajectoryVerified"]


def test_a_task_solved_every_time_asks_for_a_harder_revision(store_dir: Path) -> None:
    outbox = Outbox()
    manager = _manager(store_dir, outbox, curriculum_min_episodes=2, hardening_pass_rate=0.9)
    for _ in range(3):
        episode = manager.start(StartEpisode(task_id=TASK)).episode_id
        _solve(manager, episode)
        manager.finish(episode)
    requests = [e for e in outbox.events if isinstance(e, HardeningRequested)]
    assert len(requests) == 1 and requests[0].task_id == TASK and requests[0].round == 1


def test_a_new_manager_resumes_open_episodes(store_dir: Path) -> None:
    first = _manager(store_dir, Outbox())
    episode = first.start(StartEpisode(task_id=TASK)).episode_id
    first.step(episode, StepRequest(tool="bash", arguments={"command": REFERENCE_COMMANDS[1]}))
    finished = first.start(StartEpisode(task_id=TASK)).episode_id
    first.finish(finished)

    second = _manager(store_dir, Outbox())
    assert second.restore() == 1
    assert second.curriculum.stats(TASK).episodes == 1
    assert second.state(episode).steps[0].exit_code == 0
    assert second.finish(episode).passed
