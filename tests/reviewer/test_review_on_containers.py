"""A family whose tasks need a system package (git, installed by ``apt-get`` in the task's
Dockerfile) is reviewed on the container sandbox: its image is built, and every gate (validity,
probes, mutation, with the verifier confining the agent's repository as on every sandbox) runs in
containers of it and approves the task."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_reviewer.review import TaskReviewer
from skillgym_reviewer.settings import ReviewerSettings

from tests.builder.family_support import build, card_for
from tests.builder.test_family_git_forensics import FAMILY
from tests.support.podman import PodmanService

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


def test_a_family_with_system_packages_is_reviewed_in_its_image(podman: PodmanService, tmp_path: Path) -> None:
    built = build(FAMILY, card_for("git-commit-etiquette", "version-control"), {}, tmp_path / "built",
                  LocalVenvProvider(tmp_path / "venvs"))
    assert "apt-get install -y --no-install-recommends git" in (built.task.root / "environment/Dockerfile").read_text()
    sandbox = ContainerSandbox(engine_url=podman.url)
    settings = ReviewerSettings(sandbox="container", container_engine_url=podman.url, env_cache=tmp_path / "cache")
    (tmp_path / "scratch").mkdir()
    reviewer = TaskReviewer(sandbox, settings, tmp_path / "scratch")
    metadata = built.task.config().metadata
    event = EnvBuilt(task_id=metadata.task_id, skill_id=metadata.skill_id, package_key="unused",
                     template=metadata.template, builder="family")
    try:
        report = reviewer.review(built.task, event)
    finally:
        reviewer.close()
        sandbox.client.close()
    gates = {gate.gate: gate for gate in report.gates}
    assert report.approved, report.model_dump()
    assert {"validity", "too_lax_probes", "too_strict_probes", "mutation"} <= set(gates)
    assert report.mutation is not None and report.mutation["killed"] >= report.mutation["tried"] - 2
