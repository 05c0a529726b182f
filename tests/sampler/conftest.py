from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from skillgym_core.context import ServiceContext
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.local import LocalStore


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ServiceContext]:
    yield ServiceContext(store=LocalStore(tmp_path / "store"), sandbox=LocalSandbox(), scratch=tmp_path / "scratch")
