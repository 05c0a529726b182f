"""Run cgroups a killed process left behind: the next process to use the sandbox kills what
still runs in them and removes them, and never touches the groups of a live process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from skillgym_core.sandbox.cgroups import RUN_PREFIX, _remove_stale_runs, available_controllers


def _dead_pid() -> int:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    return finished.pid


@pytest.fixture
def memory_groups() -> Path:
    controllers = available_controllers()
    if "memory" not in controllers or os.geteuid() != 0:
        pytest.skip("needs the cgroup v1 memory controller and root")
    return controllers["memory"]


def _group_with(directory: Path, name: str) -> tuple[Path, subprocess.Popen[bytes]]:
    group = directory / name
    group.mkdir()
    process = subprocess.Popen(["sleep", "120"])
    (group / "cgroup.procs").write_text(str(process.pid))
    return group, process


def test_a_dead_owners_group_is_emptied_and_removed(memory_groups: Path) -> None:
    group, orphan = _group_with(memory_groups, f"{RUN_PREFIX}{_dead_pid()}-1")
    try:
        _remove_stale_runs(memory_groups)
        assert orphan.wait(timeout=5) == -9
        assert not group.exists()
    finally:
        orphan.kill()
        orphan.wait()


def test_a_live_owners_group_is_left_alone(memory_groups: Path) -> None:
    group, member = _group_with(memory_groups, f"{RUN_PREFIX}{os.getpid()}-999999")
    try:
        _remove_stale_runs(memory_groups)
        assert member.poll() is None and group.exists()
    finally:
        member.kill()
        member.wait()
        group.rmdir()
