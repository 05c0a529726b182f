"""Task environments built once per session (or kept across sessions in
``SKILLGYM_TEST_ENV_CACHE``): the family tests install their tasks' requirements for real."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skillgym_core.envbuild import LocalVenvProvider


@pytest.fixture(scope="session")
def env_provider(tmp_path_factory: pytest.TempPathFactory) -> LocalVenvProvider:
    cache = os.environ.get("SKILLGYM_TEST_ENV_CACHE")
    return LocalVenvProvider(Path(cache) if cache else tmp_path_factory.mktemp("env-cache"))
