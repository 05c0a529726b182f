"""The verdict on the container sandbox: code a checker runs unconfined cannot write it there
either (the same attacks as the local escape suite, in the task's own image)."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.envbuild.image import ImageProvider
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_core.taskrun import TaskRunner

from tests.support import verdict_attacks
from tests.support.podman import PodmanService

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


@pytest.fixture(scope="module")
def runner(podman: PodmanService) -> TaskRunner:
    sandbox = ContainerSandbox(engine_url=podman.url)
    return TaskRunner(sandbox, environment=ImageProvider(sandbox.client), judge=None)


@pytest.mark.parametrize("attack", sorted(verdict_attacks.ATTACKS))
def test_code_a_checker_runs_unconfined_cannot_write_the_verdict(runner: TaskRunner, tmp_path: Path, attack: str) -> None:
    task = verdict_attacks.unconfined_checker_task(tmp_path / "task")
    workspace = runner.fresh_workspace(task, tmp_path)
    planted = runner.run_agent_command(task, workspace, verdict_attacks.agent_command(attack, "8"), timeout_s=60)
    assert planted.ok, planted
    verdict = runner.verify(task, workspace)
    assert verdict_attacks.FORGED_KEY not in verdict.rewards, verdict.to_dict()
    assert verdict.failure_type == "verifier_rejected" and verdict.reward == 0.0, verdict.to_dict()


def test_the_checker_s_own_pass_still_stands(runner: TaskRunner, tmp_path: Path) -> None:
    task = verdict_attacks.unconfined_checker_task(tmp_path / "task")
    workspace = runner.fresh_workspace(task, tmp_path)
    assert runner.run_agent_command(task, workspace, verdict_attacks.agent_command("daemon_rewrites", "7")).ok
    verdict = runner.verify(task, workspace)
    assert verdict.passed and verdict.rewards == {"reward": 1.0, "answer": 1.0}, verdict.to_dict()
