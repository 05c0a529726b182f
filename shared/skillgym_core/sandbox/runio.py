"""Talking to a started sandbox: reading bwrap's ``--info-fd`` report, then the I/O loop that
feeds the command's stdin, collects its output and stops it at its limits.

Stopping kills the sandbox's init (pid 1 of its pid namespace, so the kernel kills every
process in it), bwrap itself, and whatever is left in the run's cgroups."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from typing import Any

from skillgym_core.sandbox.base import Limits, Outcome
from skillgym_core.sandbox.cgroups import RunCgroup

CPU_POLL_S = 0.05


def read_info(fd: int, deadline: float) -> dict[str, Any] | None:
    """The JSON bwrap writes to ``--info-fd`` (None if bwrap exits before writing it)."""
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            if not selector.select(max(0.0, deadline - time.monotonic())):
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            data += chunk
            with contextlib.suppress(ValueError):
                info = json.loads(data)
                if isinstance(info, dict):
                    return info


class RunIO:
    """The I/O loop of one started sandbox: feeds its stdin, collects its output up to
    ``limits.output_bytes``, and stops it (recording why) past the wall-clock deadline, the
    output cap or, where a cgroup accounts for it, the CPU budget."""

    def __init__(self, proc: subprocess.Popen[bytes], init_pid: int, limits: Limits, cgroup: RunCgroup | None):
        self.proc, self.init_pid, self.limits, self.cgroup = proc, init_pid, limits, cgroup
        self.buffers: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated = False
        self.stopped_by: Outcome | None = None
        self.detail: dict[str, Any] = {}

    def kill(self) -> None:
        for pid in (self.init_pid, self.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill_all()

    def stop(self, outcome: Outcome, **detail: Any) -> None:
        if self.stopped_by is None:
            self.stopped_by = outcome
            self.detail.update(detail)
            self.kill()

    def _over_cpu(self) -> bool:
        if self.limits.cpu_s is None or self.cgroup is None:
            return False
        used = self.cgroup.cpu_seconds()
        return used is not None and used > self.limits.cpu_s

    def pump(self, stdin: bytes | None, deadline: float) -> None:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        selector = selectors.DefaultSelector()
        streams = {self.proc.stdout.fileno(): "stdout", self.proc.stderr.fileno(): "stderr"}
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        pending = memoryview(stdin or b"")
        if self.proc.stdin is not None:
            os.set_blocking(self.proc.stdin.fileno(), False)
            selector.register(self.proc.stdin.fileno(), selectors.EVENT_WRITE)
        poll = CPU_POLL_S if self.limits.cpu_s is not None and self.cgroup is not None else None
        try:
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.stop(Outcome.TIMEOUT, limit="wall_s", wall_s=self.limits.wall_s)
                    break
                for key, _ in selector.select(min(remaining, poll) if poll else remaining):
                    if key.events & selectors.EVENT_WRITE:
                        pending = self._feed(selector, key.fd, pending)
                        continue
                    self._drain(selector, key.fd, streams[key.fd])
                if self._over_cpu():
                    self.stop(Outcome.KILLED, limit="cpu_s", cpu_s=self.limits.cpu_s)
        finally:
            selector.close()

    def _feed(self, selector: selectors.BaseSelector, fd: int, pending: memoryview) -> memoryview:
        assert self.proc.stdin is not None
        try:
            written = os.write(fd, pending[:65536])
        except BrokenPipeError:
            written = len(pending)
        pending = pending[written:]
        if not pending:
            selector.unregister(fd)
            self.proc.stdin.close()
        return pending

    def _drain(self, selector: selectors.BaseSelector, fd: int, stream: str) -> None:
        chunk = os.read(fd, 65536)
        if not chunk:
            selector.unregister(fd)
            return
        buffer = self.buffers[stream]
        room = self.limits.output_bytes - len(buffer)
        buffer += chunk[: max(room, 0)]
        if len(chunk) > room:
            self.truncated = True
            self.stop(Outcome.OUTPUT_LIMIT, limit="output_bytes", output_bytes=self.limits.output_bytes)
