"""Whether the kernel killed a container's process for want of memory, from the container's own
memory cgroup on the engine's host.

Neither the engine's ``State.OOMKilled`` nor the exit code settles it: Podman before 5.0 does not set
``OOMKilled`` (conmon writes its ``oom`` marker into its own working directory, not where Podman
looks for it), and 137 is also what a plain ``kill -9`` gives. The kernel counts the kills in the
container's memory cgroup (``oom_kill`` in cgroup v1's ``memory.oom_control``, in cgroup v2's
``memory.events``), but the engine removes that cgroup with the container, tens of milliseconds
after its last process died. So the count is read while the container runs: whenever the kernel
signals a memory event (an eventfd registered on v1's ``memory.oom_control`` where this process
may register one, ``poll`` on v2's ``memory.events``), else every few milliseconds.

The engine's processes and cgroups must be in view (an engine on this host): where the container's
cgroup cannot be seen from here, there is no watch."""

from __future__ import annotations

import contextlib
import os
import select
import threading
from pathlib import Path

from skillgym_core.sandbox.cgroups import CGROUP_MOUNT

V1_COUNTERS = "memory.oom_control"
V2_COUNTERS = "memory.events"
OOM_KEYS = ("oom", "oom_kill", "under_oom")
# Without a wake-up from the kernel the counters are polled well inside the time the engine takes
# to remove a dead container's cgroup; with one, polling only guards against a lost wake-up.
POLL_MS = 10
WOKEN_POLL_MS = 250
STOP_JOIN_S = 2.0


def container_counters(pid: int, container_id: str, mount: Path = CGROUP_MOUNT) -> Path | None:
    """The file holding the OOM-kill count of ``pid``'s memory cgroup, when that cgroup is the
    container's own (its path names the container: another pid namespace's pid is not trusted)."""
    try:
        membership = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    counters = counters_file(membership, mount)
    if counters is None or container_id not in str(counters.parent) or not counters.is_file():
        return None
    return counters


def counters_file(membership: str, mount: Path = CGROUP_MOUNT) -> Path | None:
    """Where ``/proc/PID/cgroup`` text ``membership`` puts the memory cgroup's OOM counters: the
    v1 memory hierarchy when there is one (a hybrid layout included), else the unified one."""
    unified = None
    for line in membership.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if "memory" in controllers.split(","):
            return mount / "memory" / path.lstrip("/") / V1_COUNTERS
        if not controllers:
            unified = path
    if unified is None or not (mount / "cgroup.controllers").exists():
        return None
    return mount / unified.lstrip("/") / V2_COUNTERS


def shows_oom_kill(counters: str) -> bool:
    """Whether the counters' text records an OOM: the kernel out of memory in the cgroup (v2
    ``oom``, v1 ``under_oom`` while it lasts) or a process killed for it (``oom_kill``)."""
    for line in counters.splitlines():
        key, _, value = line.partition(" ")
        if key in OOM_KEYS and value.strip().isdigit() and int(value) > 0:
            return True
    return False


def _oom_eventfd(counters: Path, counters_fd: int) -> int | None:
    """An eventfd the kernel signals when the v1 memory cgroup runs out of memory; None where this
    process may not register one (only root may write ``cgroup.event_control``)."""
    efd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
    try:
        control = os.open(counters.parent / "cgroup.event_control", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(control, f"{efd} {counters_fd}".encode())
        finally:
            os.close(control)
    except OSError:
        os.close(efd)
        return None
    return efd


class OomWatch:
    """Follows one container's OOM-kill count until :meth:`stop`, or until its cgroup is gone.
    The watching thread owns the files it reads; the caller owns the pipe end that stops it."""

    def __init__(self, counters: Path) -> None:
        self._counters_fd = os.open(counters, os.O_RDONLY | os.O_CLOEXEC)
        self._wakeup = _oom_eventfd(counters, self._counters_fd) if counters.name == V1_COUNTERS else None
        self._stop_r, self._stop_w = os.pipe()
        self.oom_killed = False
        self._poller = select.poll()
        self._poller.register(self._stop_r, select.POLLIN)
        self._poll_ms = WOKEN_POLL_MS
        if self._wakeup is not None:
            self._poller.register(self._wakeup, select.POLLIN)
        elif counters.name == V2_COUNTERS:
            # a change of memory.events wakes poll() with POLLPRI; reading the file re-arms it
            self._poller.register(self._counters_fd, select.POLLPRI)
        else:
            self._poll_ms = POLL_MS
        self._thread = threading.Thread(target=self._watch, name="oom-watch", daemon=True)
        self._thread.start()

    @classmethod
    def of_container(cls, pid: int, container_id: str) -> OomWatch | None:
        counters = container_counters(pid, container_id)
        if counters is None:
            return None
        try:
            return cls(counters)
        except OSError:  # the container ended and its cgroup went before the watch could begin
            return None

    def stop(self) -> bool:
        """Reads the count a last time and ends the watch: whether an OOM kill was seen."""
        if self._stop_w >= 0:
            with contextlib.suppress(OSError):  # the watch already ended with the cgroup
                os.write(self._stop_w, b"x")
            os.close(self._stop_w)
            self._stop_w = -1
            self._thread.join(STOP_JOIN_S)
        return self.oom_killed

    def _watch(self) -> None:
        try:
            alive = self._read()
            while alive and not self.oom_killed:
                ready = {fd for fd, _ in self._poller.poll(self._poll_ms)}
                noticed = self._wakeup in ready and self._drain_wakeup()
                alive = self._read()
                # v1 notices an OOM before the kill is counted, and the cgroup's removal after it
                # is gone: a notice followed by a read that still finds the cgroup is an OOM
                self.oom_killed = self.oom_killed or (noticed and alive)
                if self._stop_r in ready:
                    return
        finally:
            for fd in (self._counters_fd, self._wakeup, self._stop_r):
                if fd is not None:
                    os.close(fd)

    def _drain_wakeup(self) -> bool:
        assert self._wakeup is not None
        try:
            return os.eventfd_read(self._wakeup) > 0
        except BlockingIOError:
            return False

    def _read(self) -> bool:
        """Updates ``oom_killed``; False once the cgroup is gone."""
        try:
            text = os.pread(self._counters_fd, 4096, 0).decode(errors="replace")
        except OSError:
            return False
        self.oom_killed = self.oom_killed or shows_oom_kill(text)
        return True
