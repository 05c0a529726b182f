"""Directories owned by one process: what a killed process left is swept by the next one,
mounts included, even when the new process got the dead one's pid."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from skillgym_core.context import SCRATCH_PREFIX, ServiceContext
from skillgym_core.sandbox import hostmounts, owned_dirs
from skillgym_core.sandbox.hostmounts import STAGING_PREFIX, mount_volume, reach_persistently
from skillgym_core.sandbox.janitor import mount_points_below
from skillgym_core.sandbox.owned_dirs import owned_dir, owner_is_gone, process_tag, sweep

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")


def dead_process_tag() -> str:
    """The tag a process had: it has exited by the time this returns."""
    code = "from skillgym_core.sandbox.owned_dirs import process_tag; print(process_tag())"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(autouse=True)
def fresh_sweep_state() -> None:
    owned_dirs._swept.clear()


def test_a_tag_names_this_process_by_pid_and_start_time() -> None:
    pid, _, started = process_tag().partition("-")
    assert int(pid) == os.getpid() and started.isdigit()
    assert not owner_is_gone(process_tag())


def test_a_dead_process_and_a_reused_pid_are_both_gone() -> None:
    assert owner_is_gone(dead_process_tag())
    pid = os.getpid()
    assert owner_is_gone(f"{pid}-1"), "same pid, another start time: another process"
    assert owner_is_gone(str(pid)), "a bare pid equal to this process's was left by a dead one"
    assert not owner_is_gone("1"), "a bare pid of a running process is left alone"
    assert not owner_is_gone("not-a-tag")


def test_sweep_removes_only_directories_of_dead_owners(tmp_path: Path) -> None:
    stale = tmp_path / f"proc-{dead_process_tag()}"
    (stale / "task-1" / "workspace").mkdir(parents=True)
    (stale / "task-1" / "workspace" / "out.txt").write_text("left behind")
    reused = tmp_path / f"proc-{os.getpid()}-1"
    reused.mkdir()
    alive = tmp_path / f"proc-{process_tag()}"
    alive.mkdir()
    other = tmp_path / "unrelated"
    other.mkdir()

    removed = sweep(tmp_path, "proc-")

    assert sorted(removed) == sorted([stale, reused])
    assert alive.is_dir() and other.is_dir() and not stale.exists() and not reused.exists()


def test_an_owned_directory_sweeps_its_siblings_once(tmp_path: Path) -> None:
    stale = tmp_path / f"proc-{dead_process_tag()}"
    stale.mkdir()
    own = owned_dir(tmp_path, "proc-", mode=0o711)
    assert own == tmp_path / f"proc-{process_tag()}" and own.is_dir()
    assert oct(own.stat().st_mode & 0o777) == oct(0o711)
    assert not stale.exists()
    later_stale = tmp_path / f"proc-{dead_process_tag()}"
    later_stale.mkdir()
    assert owned_dir(tmp_path, "proc-") == own
    assert later_stale.exists(), "swept once per process, not on every call"


@needs_root
def test_a_killed_services_scratch_is_swept_with_its_mounted_volume(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    stale_workspace = scratch / f"{SCRATCH_PREFIX}{dead_process_tag()}" / "ws-abc"
    stale_workspace.mkdir(parents=True)
    mount_volume(stale_workspace, size_mb=1, owner=(65534, 65534))
    (stale_workspace / "data").write_text("on the tmpfs")
    assert mount_points_below(scratch)

    context = ServiceContext(store=None, sandbox=None, scratch=scratch)  # type: ignore[arg-type]

    assert context.scratch == scratch / f"{SCRATCH_PREFIX}{process_tag()}"
    assert mount_points_below(scratch) == []
    assert [path.name for path in scratch.iterdir()] == [context.scratch.name]


@needs_root
def test_staging_left_by_a_dead_process_with_this_pid_does_not_break_new_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leftovers of a killed process whose pid came back: a staging directory named after
    the bare pid, holding a persistent bind mount at ``host-0``."""
    parent = tmp_path / "staging"
    stale = parent / f"{STAGING_PREFIX}{os.getpid()}" / "host-0"
    stale.mkdir(parents=True)
    exposed = tmp_path / "exposed"
    exposed.mkdir()
    (exposed / "keep.txt").write_text("must survive the sweep")
    hostmounts._mount(str(exposed), stale, None, hostmounts.MS_BIND | hostmounts.MS_REC, None)
    source = tmp_path / "private" / "python"
    source.mkdir(parents=True)
    (tmp_path / "private").chmod(0o700)
    monkeypatch.setenv("SKILLGYM_SANDBOX_STAGING", str(parent))
    monkeypatch.setattr(hostmounts, "_persistent", {})
    hostmounts._staging_root.cache_clear()
    try:
        staged = reach_persistently(source, 65534, 65534)
        assert staged.parent == parent / f"{STAGING_PREFIX}{process_tag()}"
        assert staged.name == "host-0" and staged.is_dir()
        assert not stale.parent.exists()
        assert (exposed / "keep.txt").read_text() == "must survive the sweep"
    finally:
        hostmounts._release_persistent()
        hostmounts._staging_root.cache_clear()


EXITING = """
import os, sys
from pathlib import Path
from skillgym_core.sandbox import hostmounts
from skillgym_core.sandbox.owned_dirs import owned_dir

parent = Path(sys.argv[1])
empty, busy = owned_dir(parent, "proc-"), owned_dir(parent, "busy-")
(busy / "left").mkdir()
staging = hostmounts._staging_root()
child = os.fork()
if child == 0:
    assert hostmounts._staging_root() != staging  # the child's own
    sys.exit(0)  # an interpreter exit: its exit handlers run
os.waitpid(child, 0)
assert empty.is_dir() and staging.is_dir(), "a child's exit leaves its parent's directories alone"
"""


def test_a_process_removes_its_empty_directories_when_it_exits(tmp_path: Path) -> None:
    env = {**os.environ, "SKILLGYM_SANDBOX_STAGING": str(tmp_path / "staging")}
    subprocess.run([sys.executable, "-c", EXITING, str(tmp_path)], check=True, env=env, timeout=60)
    # the empty ones are gone; the one still holding something is left to the next sweep
    busy = next(tmp_path.glob("busy-*")).name
    assert sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*")) == [busy, f"{busy}/left", "staging"]
