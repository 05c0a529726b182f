"""Families whose tasks need a system package (git for git-forensics, nginx for a service triage
whose skill runs ``nginx -t``, Chromium for a p5.js artwork, with ``SKILLGYM_TEST_EXHAUSTIVE=1``;
``apt-get`` installs them in the task's Dockerfile) are reviewed
on the container sandbox: the image is built, and every gate (validity, probes, mutation, with
the verifier confining what the agent left as on every sandbox) runs in containers of it and
approves the task."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from skillgym_builder.families.base import Family
from skillgym_builder.families.image_compose import ImageComposeFamily
from skillgym_builder.families.service_triage import ServiceTriageFamily
from skillgym_builder.skillcard import SkillCard
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_reviewer.review import TaskReviewer
from skillgym_reviewer.settings import ReviewerSettings

from tests.builder.family_support import build, card_for
from tests.builder.test_family_git_forensics import FAMILY
from tests.builder.test_family_image_compose_p5 import KNOBS as P5_KNOBS
from tests.builder.test_family_service_triage import KNOBS as TRIAGE_KNOBS
from tests.builder.test_family_service_triage import triage_card
from tests.support.podman import PodmanService

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


CASES: dict[str, tuple[Family, Callable[[], SkillCard], dict[str, float]]] = {
    "git": (FAMILY, lambda: card_for("git-commit-etiquette", "version-control"), {}),
    "nginx": (ServiceTriageFamily(), triage_card, TRIAGE_KNOBS),
    "chromium": (ImageComposeFamily(), lambda: card_for("p5-tiles", "generative-art"), P5_KNOBS),
}
# a p5.js task's review opens its page in Chromium for every probe: minutes more than the others
EXHAUSTIVE_ONLY = {"chromium"}


@pytest.mark.parametrize("package", [
    pytest.param(name, marks=pytest.mark.skipif(name in EXHAUSTIVE_ONLY and os.environ.get("SKILLGYM_TEST_EXHAUSTIVE") != "1",
                                                reason="a long review: SKILLGYM_TEST_EXHAUSTIVE=1"))
    for name in sorted(CASES)])
def test_a_family_with_system_packages_is_reviewed_in_its_image(podman: PodmanService, tmp_path: Path,
                                                                env_provider: LocalVenvProvider,
                                                                package: str) -> None:
    family, card, knobs = CASES[package]
    built = build(family, card(), knobs, tmp_path / "built", env_provider)
    dockerfile = (built.task.root / "environment/Dockerfile").read_text()
    assert f"apt-get install -y --no-install-recommends {package}" in dockerfile
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
    assert report.approved, [gate.model_dump() for gate in report.gates]
    assert {"validity", "too_lax_probes", "too_strict_probes", "mutation"} <= set(gates)
    assert report.mutation is not None and report.mutation["killed"] >= report.mutation["tried"] - 2
