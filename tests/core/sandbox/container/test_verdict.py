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
    verdict_attacks.assert_the_checkers_verdict(verdict_attacks.verdict_after(runner, tmp_path, attack, "8"), "8", attack)


def test_the_checker_s_own_pass_still_stands(runner: TaskRunner, tmp_path: Path) -> None:
    verdict = verdict_attacks.verdict_after(runner, tmp_path, "daemon_rewrites", "7")
    verdict_attacks.assert_the_checkers_verdict(verdict, "7")
    assert verdict.rewards == {"reward": 1.0, "answer": 1.0}, verdict.to_dict()
