"""The environment server as a real process, driven over HTTP with the project's client: the
API is published, rewards come from the verifier, concurrent clients meet back-pressure and
all finish, a client that vanishes is cleaned up after, and episodes survive a crash."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from skillgym_core.rlenv import EnvClient, EnvServerError
from skillgym_core.rlenv.api import EpisodeStatus
from skillgym_core.store.local import LocalStore

from tests.support.env_server import EnvServerProcess, start_env_server
from tests.support.validated_tasks import REFERENCE_COMMANDS, publish_validated
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow
TASK = "task-ledger0001"


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    publish_validated(LocalStore(tmp_path / "store"), tmp_path / "tasks")
    return tmp_path / "store"


@pytest.fixture
def server(tmp_path: Path, store_root: Path) -> Iterator[EnvServerProcess]:
    with start_env_server(tmp_path / "server", store_root, max_open_episodes=3, retry_after_s=0.2,
                          janitor_interval_s=0.3) as process:
        yield process


def _solve(client: EnvClient, episode_id: str) -> None:
    for command in REFERENCE_COMMANDS:
        client.step(episode_id, "bash", {"command": command})


def test_the_api_is_published_and_rewards_come_from_the_verifier(server: EnvServerProcess) -> None:
    paths = httpx.get(f"{server.base_url}/openapi.json").json()["paths"]
    assert {"/v1/episodes", "/v1/episodes/{episode_id}/step", "/v1/episodes/{episode_id}/finish"} <= set(paths)
    with EnvClient(server.base_url) as client:
        solved = client.start(task_id=TASK, reward="shaped")
        assert [tool["function"]["name"] for tool in solved.tools] == ["bash", "read_file", "write_file"]
        client.step(solved.episode_id, "bash", '{"cmd": "ls"}')  # malformed: costs in shaped mode
        _solve(client, solved.episode_id)
        result = client.finish(solved.episode_id)
        assert (result.passed, result.reward, result.malformed_calls) == (True, pytest.approx(0.9), 1)
        idle = client.start(sample={"category": "data-processing"})
        assert client.finish(idle.episode_id).reward == 0.0
        with pytest.raises(EnvServerError) as missing:
            client.step("ep-000000000000000000000000", "bash", {"command": "true"})
        assert missing.value.status == 404
        tasks = httpx.get(f"{server.base_url}/v1/tasks").json()
        assert tasks[0]["task_id"] == TASK and tasks[0]["episodes"] == 2 and tasks[0]["pass_rate"] == 0.5
    scraped = httpx.get(f"{server.base_url}/metrics").text
    assert 'skillgym_envserver_episodes_ended_total{how="finished"} 2.0' in scraped


def test_concurrent_clients_meet_back_pressure_and_all_finish(server: EnvServerProcess) -> None:
    rewards: list[float] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            with EnvClient(server.base_url, busy_wait_s=120) as client:
                episode = client.start(task_id=TASK).episode_id
                _solve(client, episode)
                rewards.append(client.finish(episode).reward)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert errors == [] and rewards == [1.0] * 8
    scraped = httpx.get(f"{server.base_url}/metrics").text
    busy = next(line for line in scraped.splitlines() if line.startswith("skillgym_envserver_busy_rejections_total"))
    assert float(busy.split()[-1]) > 0


def test_a_client_that_disappears_is_cleaned_up_after(server: EnvServerProcess) -> None:
    client = EnvClient(server.base_url)
    episode = client.start(task_id=TASK, ttl_s=1).episode_id
    client.step(episode, "bash", {"command": "echo working > notes.txt"})
    client.close()
    with EnvClient(server.base_url) as observer:
        wait_for(lambda: observer.state(episode).status is EpisodeStatus.EXPIRED, timeout_s=30, what="expiry")


def test_open_episodes_survive_a_crash_of_the_server(server: EnvServerProcess) -> None:
    with EnvClient(server.base_url) as client:
        episode = client.start(task_id=TASK).episode_id
        client.step(episode, "bash", {"command": REFERENCE_COMMANDS[1]})
    server.restart(hard=True)
    with EnvClient(server.base_url) as client:
        assert client.state(episode).status is EpisodeStatus.OPEN
        result = client.finish(episode)
        assert result.passed and result.steps == 1


def test_a_token_is_required_when_configured(tmp_path: Path, store_root: Path) -> None:
    with start_env_server(tmp_path / "guarded", store_root, token="s3cret-token") as process:
        refused = httpx.post(f"{process.base_url}/v1/episodes", json={"task_id": TASK})
        assert refused.status_code == 401
        with EnvClient(process.base_url, token="s3cret-token") as client:
            episode = client.start(task_id=TASK).episode_id
            seen = client.step(episode, "bash", {"command": "env; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'"})
            assert "s3cret-token" not in seen.observation and "SKILLGYM_ENVSERVER" not in seen.observation
            assert "SKILLGYM_STORE" not in seen.observation
