"""cgroup v1 controllers for one sandboxed run: memory (with OOM detection), pids, CPU quota
and CPU-time accounting.

Each run gets its own child cgroup under the calling process's own cgroup in every usable
controller. Usability is probed once per process (a child directory is created and removed);
a controller that cannot be used is simply absent and the sandbox falls back to rlimits.

Processes get in by inheritance: the spawning *thread* moves itself into the run's cgroups
(writing ``0`` to ``tasks``), forks, and moves back. Moving another process by pid takes
the kernel's global threadgroup lock and waits for an RCU grace period (milliseconds);
moving the current thread does not. Empty run cgroups are removed by a background thread so
the caller never waits for the kernel to retire them."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from skillgym_core.sandbox import janitor

CGROUP_MOUNT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
RUN_PREFIX = "skillgym-run-"
_run_counter = itertools.count()


def _own_cgroup_paths(proc_cgroup: str) -> dict[str, str]:
    """controller -> path of this process's cgroup in that v1 hierarchy."""
    paths: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[1]:
            continue
        for controller in parts[1].split(","):
            paths[controller] = parts[2]
    return paths


def _probe(directory: Path) -> bool:
    probe = directory / f"{RUN_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


def _remove_stale_runs(directory: Path) -> None:
    """Drop the run cgroups of processes that died before cleaning up. Whatever still runs in
    one is a sandbox whose parent was killed (nothing was left to enforce its wall time), so it
    is killed first: no sandboxed process outlives the process that started it for long."""
    for child in directory.glob(f"{RUN_PREFIX}*"):
        owner = child.name.removeprefix(RUN_PREFIX).split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            _kill_members(child)
            with contextlib.suppress(OSError):
                child.rmdir()


def _kill_members(group: Path, timeout_s: float = 2.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            members = [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not members:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


@lru_cache(maxsize=1)
def available_controllers() -> dict[str, Path]:
    """controller -> directory under which run cgroups can be created (probed once)."""
    try:
        own = _own_cgroup_paths(Path("/proc/self/cgroup").read_text())
    except OSError:
        return {}
    usable: dict[str, Path] = {}
    for controller in CONTROLLERS:
        mount = CGROUP_MOUNT / controller
        if controller not in own or not (mount / "cgroup.procs").exists():
            continue
        directory = mount / own[controller].lstrip("/")
        if _probe(directory):
            _remove_stale_runs(directory)
            usable[controller] = directory
    return usable


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


@dataclass
class RunCgroup:
    """The per-run cgroups; ``spawning`` puts new processes in, ``remove`` kills what is left and
    deletes the directories."""

    paths: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def create(cls, *, memory_mb: int | None, pids: int | None, cpu_quota: bool = False) -> RunCgroup:
        """The run's cgroups with memory and pids limits. The cpu controller (moving a thread
        in and out of it costs about a millisecond) is joined only when ``cpu_quota``; the
        quota itself comes later (:meth:`limit_cpus`) so the spawning thread is never
        throttled by it."""
        name = f"{RUN_PREFIX}{os.getpid()}-{next(_run_counter)}"
        group = cls()
        try:
            for controller, parent in available_controllers().items():
                if controller == "cpu" and not cpu_quota:
                    continue
                path = parent / name
                path.mkdir()
                group.paths[controller] = path
            group._apply(memory_mb=memory_mb, pids=pids)
        except OSError:
            group.remove()
            raise
        return group

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """While inside, processes this thread forks start in the run's cgroups."""
        home = available_controllers()
        entered: list[str] = []
        try:
            for controller, path in self.paths.items():
                _write(path / "tasks", "0")
                entered.append(controller)
            yield
        finally:
            for controller in entered:
                _write(home[controller] / "tasks", "0")

    def limit_cpus(self, cpus: float) -> None:
        if "cpu" in self.paths:
            period = _read_int(self.paths["cpu"] / "cpu.cfs_period_us") or 100_000
            _write(self.paths["cpu"] / "cpu.cfs_quota_us", str(max(1000, int(period * cpus))))

    def _apply(self, *, memory_mb: int | None, pids: int | None) -> None:
        if memory_mb is not None and "memory" in self.paths:
            memory = self.paths["memory"]
            limit = str(memory_mb * 1024 * 1024)
            _write(memory / "memory.limit_in_bytes", limit)
            swap = memory / "memory.memsw.limit_in_bytes"
            if swap.exists():
                with contextlib.suppress(OSError):
                    _write(swap, limit)
        if pids is not None and "pids" in self.paths:
            _write(self.paths["pids"] / "pids.max", str(pids))

    def cpu_seconds(self) -> float | None:
        if "cpuacct" not in self.paths:
            return None
        usage = _read_int(self.paths["cpuacct"] / "cpuacct.usage")
        return None if usage is None else usage / 1e9

    def oom_kills(self) -> int:
        if "memory" not in self.paths:
            return 0
        try:
            text = (self.paths["memory"] / "memory.oom_control").read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def peak_memory_bytes(self) -> int | None:
        if "memory" not in self.paths:
            return None
        return _read_int(self.paths["memory"] / "memory.max_usage_in_bytes")

    def pids_peak(self) -> int | None:
        return _read_int(self.paths["pids"] / "pids.peak") if "pids" in self.paths else None

    def pids_limit_hits(self) -> int:
        """How many forks the pids limit refused."""
        if "pids" not in self.paths:
            return 0
        with contextlib.suppress(OSError, ValueError):
            for line in (self.paths["pids"] / "pids.events").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value)
        return 0

    def members(self) -> set[int]:
        pids: set[int] = set()
        for path in self.paths.values():
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in (path / "cgroup.procs").read_text().split())
        return pids

    def kill_all(self) -> None:
        # our own pid shows up while the spawning thread is inside; never kill ourselves
        for pid in self.members() - {os.getpid()}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, *, timeout_s: float = 2.0) -> bool:
        """Kill any process still inside, then delete the cgroups; False if one would not go."""
        deadline = time.monotonic() + timeout_s
        removed = True
        for controller, path in list(self.paths.items()):
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        removed = False
                        break
                    self.kill_all()
                    time.sleep(0.002)
            if removed:
                del self.paths[controller]
        return removed

    def release(self) -> None:
        """Kill what is left and remove the cgroups in the background."""
        self.kill_all()
        janitor.later(self.remove)
