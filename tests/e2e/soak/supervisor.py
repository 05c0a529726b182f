"""Keeps the five service processes running the way Kubernetes does with ``restartPolicy:
Always``: a process that exits is started again, at once after a kill the soak made on purpose,
otherwise after a back-off that doubles while it keeps exiting on its own (CrashLoopBackOff)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from tests.e2e.distributed import SERVICES, Cluster


@dataclass(frozen=True)
class Exit:
    service: str
    at: float  # seconds since the epoch
    returncode: int
    killed: bool  # by the soak (kill -9); otherwise the process exited on its own
    log_tail: str


class Supervisor:
    def __init__(
        self, cluster: Cluster, *, poll_s: float = 0.25, backoff_s: float = 1.0, backoff_max_s: float = 8.0
    ) -> None:
        self.cluster = cluster
        self.poll_s = poll_s
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.exits: list[Exit] = []
        self._lock = threading.Lock()
        self._killing: set[str] = set()
        self._crash_streak = dict.fromkeys(SERVICES, 0)
        self._restart_at: dict[str, float] = {}
        self._started_at = dict.fromkeys(SERVICES, time.monotonic())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="supervisor", daemon=True)

    def __enter__(self) -> Supervisor:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def kill(self, service: str) -> None:
        """``kill -9`` the service; the loop starts it again."""
        with self._lock:
            self._killing.add(service)
            self.cluster.kill(service)

    def crashes(self) -> list[Exit]:
        return [e for e in self.exits if not e.killed]

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            with self._lock:
                for service in SERVICES:
                    self._tend(service)

    def _tend(self, service: str) -> None:
        now = time.monotonic()
        process = self.cluster.processes[service]
        if process.poll() is None:
            if now - self._started_at[service] > 30:
                self._crash_streak[service] = 0  # it stayed up: the next crash starts the back-off anew
            return
        if service not in self._restart_at:
            killed = service in self._killing
            self._killing.discard(service)
            self.exits.append(Exit(service, time.time(), process.returncode, killed, self.cluster.logs(service)[-2000:]))
            delay = 0.0
            if not killed:
                self._crash_streak[service] += 1
                delay = min(self.backoff_max_s, self.backoff_s * 2 ** (self._crash_streak[service] - 1))
            self._restart_at[service] = now + delay
        if now >= self._restart_at[service]:
            del self._restart_at[service]
            self.cluster.start(service)
            self._started_at[service] = now
