"""SkillGym's own tasks on the container sandbox: the task's Dockerfile is its environment, the
validator's checks hold there, and the verifier grades a copy of the agent's workspace in a fresh
container of the same image."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skillgym_builder.families.layered_config import LayeredConfigFamily
from skillgym_core.contracts.task import AGENT_WORKDIR
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_core.envbuild.image import ImageEnvironment, ImageProvider
from skillgym_core.sandbox.base import Mount
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_core.taskrun import TaskRunner

from tests.builder.family_support import BuiltTask, build, card_for
from tests.support.podman import PodmanService

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]
HARD = {"record_count": 6, "distractor_files": 1}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltTask:
    root = tmp_path_factory.mktemp("layered")
    return build(LayeredConfigFamily(), card_for("config-layers", "version-control"), HARD, root,
                 LocalVenvProvider(root / "venvs"))


@pytest.fixture(scope="module")
def runner(podman: PodmanService) -> TaskRunner:
    sandbox = ContainerSandbox(engine_url=podman.url)
    return TaskRunner(sandbox, environment=ImageProvider(sandbox.client), judge=None)


def test_the_task_runs_in_its_dockerfile_image(built: BuiltTask, runner: TaskRunner) -> None:
    prepared = runner.prepare_environment(built.task)
    assert isinstance(prepared, ImageEnvironment) and prepared.image.startswith("localhost/skillgym-task:")
    assert runner.prepare_environment(built.task).cache_hit  # type: ignore[union-attr]


def test_nop_fails_and_the_reference_solution_passes(built: BuiltTask, runner: TaskRunner, tmp_path: Path) -> None:
    assert runner.verify(built.task, runner.fresh_workspace(built.task, tmp_path)).reward == 0.0
    workspace = runner.fresh_workspace(built.task, tmp_path)
    solved = runner.run_solution(built.task, workspace)
    assert solved.ok, solved.stderr
    outcome = runner.verify(built.task, workspace)
    assert outcome.passed and outcome.reward == 1.0, outcome.to_dict()


def test_the_agent_cannot_reach_the_verdict(built: BuiltTask, runner: TaskRunner, tmp_path: Path) -> None:
    workspace = runner.fresh_workspace(built.task, tmp_path)
    secret = tmp_path / "host-secret"
    secret.write_text("do not read")
    secret.chmod(0o600)
    attack = ("mkdir -p /logs/verifier 2>/dev/null; echo 1 > /logs/verifier/reward.txt; "
              f"ln -s {secret} stolen; ln -s /etc/shadow shadow; (sleep 30; echo late > late.txt) & echo planted")
    mounts, env = runner.environment_extras(built.task)
    result = runner.sandbox.run(["bash", "-c", attack], mounts=[Mount(workspace, AGENT_WORKDIR, writable=True), *mounts],
                                workdir=AGENT_WORKDIR, env=env)
    assert result.stdout.strip() == "planted"
    outcome = runner.verify(built.task, workspace)
    assert outcome.reward == 0.0 and not outcome.passed
    assert not (workspace / "late.txt").exists()  # the agent's container, and its processes, are gone
    assert os.path.islink(workspace / "stolen")  # left as a link on the host, never followed into the verifier
