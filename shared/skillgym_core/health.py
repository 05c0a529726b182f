"""What a running consumer knows about its own health: whether each dependency (the store, the
broker, whatever a handler waits on) answered the last time it was used, and whether each
partition it owns makes progress while records wait there. The worker thread writes, the HTTP
thread reads, hence the locks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass

from skillgym_core import metrics
from skillgym_core.bus.base import TopicPartition

STORE = "store"
BROKER = "broker"


@dataclass(frozen=True)
class DependencyState:
    up: bool = True
    last_error: str | None = None
    last_failure_at: float | None = None  # wall-clock seconds, for people reading /readyz
    down_since: float | None = None


class DependencyHealth:
    """Up or down per dependency, by the latest observation (a failure, or a success after one)."""

    def __init__(self, service: str, dependencies: Iterable[str] = (STORE, BROKER)) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._states: dict[str, DependencyState] = {}
        for name in dependencies:
            self._set(name, DependencyState())

    def _set(self, name: str, state: DependencyState) -> None:
        self._states[name] = state
        metrics.DEPENDENCY_UP.labels(self.service, name).set(1 if state.up else 0)

    def failed(self, dependency: str, exc: BaseException) -> None:
        now = time.time()
        with self._lock:
            previous = self._states.get(dependency, DependencyState())
            down_since = previous.down_since if not previous.up else now
            error = f"{type(exc).__name__}: {exc}"
            self._set(dependency, DependencyState(False, error, now, down_since))

    def answered(self, dependency: str) -> None:
        with self._lock:
            previous = self._states.get(dependency)
            if previous is None or not previous.up:
                last = previous or DependencyState()
                self._set(dependency, DependencyState(True, last.last_error, last.last_failure_at, None))

    def all_answered(self) -> None:
        with self._lock:
            names = list(self._states)
        for name in names:
            self.answered(name)

    def down(self) -> list[str]:
        with self._lock:
            return sorted(name for name, state in self._states.items() if not state.up)

    def snapshot(self) -> dict[str, dict[str, object]]:
        with self._lock:
            return {name: asdict(state) for name, state in sorted(self._states.items())}


@dataclass(frozen=True)
class StalledPartition:
    topic: str
    partition: int
    backlog: int
    seconds_without_progress: float


class ProgressTracker:
    """A partition is stalled once records have waited on it for ``stall_after_s`` without any
    record of it being settled (handled, answered from the done-marker or dead-lettered)."""

    def __init__(self, stall_after_s: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.stall_after_s = stall_after_s
        self._clock = clock
        self._lock = threading.Lock()
        self._backlog: dict[TopicPartition, int] = {}
        self._waiting_since: dict[TopicPartition, float] = {}
        self._last_settled: dict[TopicPartition, float] = {}

    def polled(self, handed_over: Mapping[TopicPartition, int]) -> None:
        """Records just handed to the worker wait until settled, whatever the last backlog said."""
        now = self._clock()
        with self._lock:
            for partition, count in handed_over.items():
                self._backlog[partition] = max(self._backlog.get(partition, 0), count)
                self._waiting_since.setdefault(partition, now)

    def settled(self, partition: TopicPartition) -> None:
        with self._lock:
            self._last_settled[partition] = self._clock()

    def observe(self, backlog: Mapping[TopicPartition, int]) -> None:
        """Record the latest backlog of every partition this member owns (others are forgotten)."""
        now = self._clock()
        with self._lock:
            self._backlog = dict(backlog)
            for partition, waiting in backlog.items():
                if waiting > 0:
                    self._waiting_since.setdefault(partition, now)
                else:
                    self._waiting_since.pop(partition, None)
            for partition in set(self._waiting_since) - set(backlog):
                del self._waiting_since[partition]
            for partition in set(self._last_settled) - set(backlog):
                del self._last_settled[partition]

    def stalled(self) -> list[StalledPartition]:
        now = self._clock()
        with self._lock:
            found = []
            for partition, since in sorted(self._waiting_since.items()):
                idle = now - max(since, self._last_settled.get(partition, since))
                if idle >= self.stall_after_s:
                    topic, number = partition
                    found.append(StalledPartition(topic, number, self._backlog.get(partition, 0), round(idle, 1)))
            return found

    def stalled_count(self, topic: str) -> int:
        return sum(1 for stall in self.stalled() if stall.topic == topic)
