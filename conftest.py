"""Root conftest: makes the repository root importable for ``tests.support``, and detaches the
workspace volumes (tmpfs mounts) this session's tests leave below its temporary directory, so
neither the mount table nor pytest's own clean-up of old runs is left to deal with them. Only
this session's directory: another pytest session on the machine may be using its volumes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.geteuid() != 0:
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    from skillgym_core.sandbox.hostmounts import unmount
    from skillgym_core.sandbox.janitor import mount_points_below

    for point in mount_points_below(Path(factory.getbasetemp())):
        unmount(Path(point))
