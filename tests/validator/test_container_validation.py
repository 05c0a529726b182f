"""The validator on the container sandbox: a SkillGym task whose Dockerfile is its environment is
proven (nop fails, the reference and the alternative pass) in containers of that image."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_builder.families.layered_config import LayeredConfigFamily
from skillgym_core.envbuild import LocalVenvProvider
from skillgym_validator.settings import ValidatorSettings
from skillgym_validator.validation import validate_task_dirs

from tests.builder.family_support import build, card_for
from tests.support.podman import PodmanService

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


def test_the_validator_proves_the_task_on_containers(podman: PodmanService, tmp_path: Path,
                                                    env_provider: LocalVenvProvider) -> None:
    built = build(LayeredConfigFamily(), card_for("config-layers", "version-control"), {"record_count": 6}, tmp_path,
                  env_provider)
    settings = ValidatorSettings(sandbox="container", container_engine_url=podman.url, env_cache=tmp_path / "cache")
    record = validate_task_dirs([built.task.root], settings)[0]
    assert record["valid"], record
