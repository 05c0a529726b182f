"""Reading a container's OOM kills from its memory cgroup: where the counters are for cgroup v1,
v2 and the hybrid layout, what in them is an OOM, and a watch that follows them (on stand-in
files here; the container tests watch real cgroups)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from skillgym_core.sandbox.container.oomwatch import OomWatch, container_counters, counters_file, shows_oom_kill

CONTAINER = "libpod-0123abcd"
HYBRID = f"5:devices:/libpod_parent/{CONTAINER}\n4:memory:/libpod_parent/{CONTAINER}\n0::/libpod_parent/{CONTAINER}\n"
UNIFIED = f"0::/machine.slice/{CONTAINER}.scope/container\n"


def test_the_v1_memory_hierarchy_wins_on_a_hybrid_layout(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").touch()
    assert counters_file(HYBRID, tmp_path) == tmp_path / "memory/libpod_parent" / CONTAINER / "memory.oom_control"


def test_the_unified_hierarchy_is_read_where_it_is_mounted(tmp_path: Path) -> None:
    assert counters_file(UNIFIED, tmp_path) is None  # a unified line, but no cgroup2 at the mount
    (tmp_path / "cgroup.controllers").touch()
    assert counters_file(UNIFIED, tmp_path) == tmp_path / f"machine.slice/{CONTAINER}.scope/container/memory.events"
    assert counters_file("garbage\n", tmp_path) is None


def test_a_cgroup_that_does_not_name_the_container_is_not_watched() -> None:
    assert container_counters(os.getpid(), "not-this-process") is None
    assert container_counters(2**22 + 7, CONTAINER) is None  # no such process


def test_what_counts_as_an_oom() -> None:
    assert not shows_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert shows_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert shows_oom_kill("oom_kill_disable 0\nunder_oom 1\noom_kill 0\n")
    assert not shows_oom_kill("low 0\nhigh 4\nmax 9\noom 0\noom_kill 0\noom_group_kill 0\n")  # reclaim is no OOM
    assert shows_oom_kill("low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\noom_group_kill 0\n")


def _counters(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_watch_sees_a_kill_counted_while_it_runs(tmp_path: Path) -> None:
    counters = _counters(tmp_path, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    watch = OomWatch(counters)  # no cgroup.event_control beside it: the counters are polled
    counters.write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    deadline = time.monotonic() + 5
    while not watch.oom_killed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert watch.oom_killed and watch.stop()


def test_stopping_reads_the_counters_a_last_time(tmp_path: Path) -> None:
    quiet = _counters(tmp_path, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
    assert OomWatch(quiet).stop() is False
    killed = OomWatch(quiet)
    quiet.write_text("low 0\nhigh 0\nmax 1\noom 1\noom_kill 1\n")
    assert killed.stop() is True and killed.stop() is True
