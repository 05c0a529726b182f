"""The built-in agent harness on the container sandbox, on a Harbor task as Harbor users have it:
its commands run in containers of the task's image, and the trusted verifier scores the run in a
fresh one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import Envelope, EnvValidated, TrajectoryVerified
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_core.store.local import LocalStore
from skillgym_sampler import SamplerService, SamplerSettings

from tests.support.harbor_tasks import hello_world
from tests.support.podman import PodmanService
from tests.support.scripted_llm import Rules, ScriptedLLMServer, assistant, bash

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


def _turn(body: dict[str, Any]) -> dict[str, Any]:
    done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    if done == 0:
        return bash('echo "Hello, world!" > hello.txt && id -u && cat /etc/os-release | head -1')
    return assistant("Wrote hello.txt.")


@pytest.fixture
def ctx(podman: PodmanService, tmp_path: Path) -> Iterator[ServiceContext]:
    sandbox = ContainerSandbox(engine_url=podman.url)
    yield ServiceContext(store=LocalStore(tmp_path / "store"), sandbox=sandbox, scratch=tmp_path / "scratch")
    sandbox.client.close()


def test_the_builtin_agent_runs_in_containers(ctx: ServiceContext, podman: PodmanService,
                                                       tmp_path: Path) -> None:
    task = TaskDir(hello_world(tmp_path / "hello-world"))
    task_id = task.config().metadata.task_id
    event = Envelope.wrap(EnvValidated(task_id=task_id, skill_id="none", package_key=ctx.save_task(task_id, task),
                                       valid=True, label="verifier-passed"), producer="test", correlation_id="c")
    with ScriptedLLMServer(Rules([], default=_turn)) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, llm_model="scripted-teacher", sandbox="container",
                                   container_engine_url=podman.url, env_cache=tmp_path / "cache",
                                   harnesses=["builtin"], skill_conditions=["without"],
                                   max_seconds=120)
        outputs = [o for o in SamplerService(ctx, settings).handle(event) if isinstance(o, TrajectoryVerified)]
    runs = {o.harness: o for o in outputs}
    assert set(runs) == {"builtin"} and runs["builtin"].passed and runs["builtin"].model == "scripted-teacher"
    trajectory = ctx.store.get_bytes(runs["builtin"].atif_key).decode()
    assert "2000000" in trajectory and "Debian" in trajectory  # the sandbox uid, in the task's (stand-in) image
