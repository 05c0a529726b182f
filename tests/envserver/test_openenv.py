"""OpenEnv's own client (``openenv-core``'s ``GenericEnvClient``, from a separate environment)
rolls out a SkillGym task through the server's OpenEnv sessions: the reference steps earn 1,
doing nothing 0, and a malformed message is an OpenEnv error, not a dropped connection."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from skillgym_core.store.local import LocalStore

from tests.support.env_server import EnvServerProcess, start_env_server
from tests.support.peers import peer_python
from tests.support.validated_tasks import REFERENCE_COMMANDS, publish_validated

pytestmark = pytest.mark.slow
TASK = "task-ledger0001"
OPENENV = "openenv-core==0.3.0"
# openenv-core's client imports its server side too (fastmcp); its UI and LLM extras are not needed
OPENENV_NEEDS = ["fastmcp>=3", "fastapi", "uvicorn", "requests", "websockets", "pyyaml", "tomli", "tomli-w"]

CLIENT = """
import json, sys
from openenv.core.generic_client import GenericEnvClient
base_url, task_id, commands = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
report = {}
with GenericEnvClient(base_url=base_url).sync() as env:
    first = env.reset(task_id=task_id, policy="openenv-client")
    report["instruction"] = first.observation["instruction"]
    report["tools"] = [t["function"]["name"] for t in first.observation["tools"]]
    for command in commands:
        env.step({"tool": "bash", "arguments": {"command": command}})
    report["state_steps"] = env.state()["step_count"]
    done = env.step({"finish": True})
    report["solved"] = [done.reward, done.done]
    env.reset(task_id=task_id)
    idle = env.step({"finish": True})
    report["idle"] = [idle.reward, idle.done]
    env.reset(task_id=task_id)
    try:
        env.step({"tool": "bash", "arguments": {"command": "true"}, "finish": "yes"})
        env.step({"finish": True})
        env.step({"tool": "bash", "arguments": {"command": "true"}})
    except RuntimeError as exc:
        report["closed_error"] = str(exc)
print(json.dumps(report))
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EnvServerProcess]:
    publish_validated(LocalStore(tmp_path / "store"), tmp_path / "tasks")
    with start_env_server(tmp_path / "server", tmp_path / "store") as process:
        yield process


def test_openenvs_own_client_rolls_out_a_task(server: EnvServerProcess) -> None:
    python = peer_python("openenv-core-0.3.0", OPENENV_NEEDS, no_deps=[OPENENV])
    done = subprocess.run(
        [str(python), "-c", CLIENT, f"{server.base_url}/openenv", TASK, json.dumps(REFERENCE_COMMANDS)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "ledger.csv" in report["instruction"] and report["tools"] == ["bash", "read_file", "write_file"]
    assert report["state_steps"] == 3
    assert report["solved"] == [1.0, True] and report["idle"] == [0.0, True]
    assert "EPISODE_CLOSED" in report["closed_error"]
