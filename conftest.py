"""Root conftest: makes the repository root importable for ``tests.support``, and detaches the
workspace volumes (tmpfs mounts) tests leave below pytest's temporary directories, so neither
the mount table nor pytest's own clean-up of old runs is left to deal with them."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest


def _detach_test_volumes() -> None:
    if os.geteuid() != 0:
        return
    from skillgym_core.sandbox.hostmounts import unmount
    from skillgym_core.sandbox.janitor import mount_points_below

    for root in Path(tempfile.gettempdir()).glob("pytest-of-*"):
        for point in mount_points_below(root):
            unmount(Path(point))


def pytest_sessionstart(session: pytest.Session) -> None:
    _detach_test_volumes()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _detach_test_volumes()
