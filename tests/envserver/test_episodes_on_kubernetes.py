"""Episodes on the Kubernetes backend: each episode's tool calls run in one warm SandboxRun pod
(the real operator on an emulated API server, a stand-in kubelet running the pod for real, the
store between them), the trusted verifier grades what the pod handed back, and a restarted
server carries on in the same pod."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.rlenv.api import StartEpisode, StepRequest
from skillgym_core.sandbox.kubernetes import KubernetesSandbox
from skillgym_core.store.local import LocalStore
from skillgym_core.taskrun import TaskRunner
from skillgym_envserver.catalog import TaskCatalog
from skillgym_envserver.curriculum import Curriculum
from skillgym_envserver.episodes import EpisodeManager
from skillgym_envserver.settings import EnvServerSettings

from tests.operator.apiserver import ApiServer
from tests.operator.conftest import NAMESPACE, apiserver, node, operator, operator_settings  # noqa: F401
from tests.operator.node import SandboxNode
from tests.support.validated_tasks import REFERENCE_COMMANDS, publish_validated
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TASK = "task-ledger0001"
RUNS = "skillgym.io/v1alpha1/sandboxruns"


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "store")
    publish_validated(store, tmp_path / "tasks")
    return store


def _manager(tmp_path: Path, store: LocalStore, api: ApiServer) -> EpisodeManager:
    settings = EnvServerSettings(state_dir=tmp_path / "state", step_timeout_s=20)  # type: ignore[call-arg]
    sandbox = KubernetesSandbox(store, namespace=NAMESPACE, api_client=api.api_client, start_slack_s=60)
    catalog = TaskCatalog(store, settings.state_dir / "tasks", refresh_s=0)
    return EpisodeManager(settings, store, TaskRunner(sandbox), catalog, Curriculum(), lambda payload, key: None)


def _sessions(api: ApiServer) -> list[str]:
    return sorted(name for name in api.objects(RUNS, NAMESPACE) if name.startswith("sbs-"))


def test_an_episode_runs_in_one_warm_pod_and_earns_its_reward(
    apiserver: ApiServer, node: SandboxNode, store: LocalStore, tmp_path: Path  # noqa: F811
) -> None:
    manager = _manager(tmp_path, store, apiserver)
    episode = manager.start(StartEpisode(task_id=TASK)).episode_id
    [session] = _sessions(apiserver)
    for command in REFERENCE_COMMANDS:
        assert manager.step(episode, StepRequest(tool="bash", arguments={"command": command})).exit_code == 0
    wrote = manager.step(episode, StepRequest(tool="write_file", arguments={"path": "notes/n.txt", "content": "x\n"}))
    assert wrote.exit_code == 0
    assert manager.step(episode, StepRequest(tool="read_file", arguments={"path": "notes/n.txt"})).observation == "x\n"
    assert _sessions(apiserver) == [session]  # every call in the same session
    result = manager.finish(episode)
    assert (result.reward, result.passed) == (1.0, True)
    wait_for(lambda: not _sessions(apiserver), what="session run removed")


def test_doing_nothing_earns_zero_and_deleting_an_episode_ends_its_pod(
    apiserver: ApiServer, node: SandboxNode, store: LocalStore, tmp_path: Path  # noqa: F811
) -> None:
    manager = _manager(tmp_path, store, apiserver)
    idle = manager.start(StartEpisode(task_id=TASK)).episode_id
    assert manager.finish(idle).reward == 0.0
    dropped = manager.start(StartEpisode(task_id=TASK)).episode_id
    manager.step(dropped, StepRequest(tool="bash", arguments={"command": "echo hi"}))
    assert len(_sessions(apiserver)) == 1
    manager.delete(dropped)
    wait_for(lambda: not _sessions(apiserver), what="session run removed")


def test_a_restarted_server_carries_on_in_the_same_pod(
    apiserver: ApiServer, node: SandboxNode, store: LocalStore, tmp_path: Path  # noqa: F811
) -> None:
    first = _manager(tmp_path, store, apiserver)
    episode = first.start(StartEpisode(task_id=TASK)).episode_id
    first.step(episode, StepRequest(tool="bash", arguments={"command": REFERENCE_COMMANDS[1]}))
    [session] = _sessions(apiserver)

    second = _manager(tmp_path, store, apiserver)
    assert second.restore() == 1
    shown = second.step(episode, StepRequest(tool="bash", arguments={"command": "cat total.txt"}))
    assert shown.exit_code == 0 and shown.observation.strip()  # the file the first server's step wrote
    assert _sessions(apiserver) == [session]
    assert second.finish(episode).passed
