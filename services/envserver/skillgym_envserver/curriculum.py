"""Which task an episode gets when the client asks for a kind of task rather than one task: the
families present are balanced, and within a family the tasks the current policy solves sometimes
(pass rate inside the band) are preferred over untried ones, and both over tasks it always or
never solves, which teach a policy-gradient learner nothing (every rollout gets the same reward)."""

from __future__ import annotations

import random
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from skillgym_core.errors import SkillGymError
from skillgym_core.rlenv.api import SampleSpec

from skillgym_envserver.catalog import TaskEntry

IN_BAND_WEIGHT = 4.0
UNTRIED_WEIGHT = 2.0
OUT_OF_BAND_WEIGHT = 0.25


class NoTaskMatches(SkillGymError):
    reason = "no_task_matches"
    retryable = False


@dataclass
class TaskStats:
    episodes: int = 0
    passed: int = 0
    hardening_requested: bool = False

    @property
    def pass_rate(self) -> float:
        return self.passed / self.episodes if self.episodes else 0.0


class Curriculum:
    def __init__(self, band: tuple[float, float] = (0.1, 0.9), min_episodes: int = 4) -> None:
        self.band = band
        self.min_episodes = min_episodes
        self._stats: dict[str, TaskStats] = defaultdict(TaskStats)
        self._lock = threading.Lock()

    def record(self, task_id: str, passed: bool) -> TaskStats:
        with self._lock:
            stats = self._stats[task_id]
            stats.episodes += 1
            stats.passed += int(passed)
            return TaskStats(stats.episodes, stats.passed, stats.hardening_requested)

    def claim_hardening(self, task_id: str, threshold: float) -> TaskStats | None:
        """The task's stats, once, when it has become too easy to teach anything."""
        with self._lock:
            stats = self._stats[task_id]
            if stats.hardening_requested or stats.episodes < self.min_episodes or stats.pass_rate < threshold:
                return None
            stats.hardening_requested = True
            return TaskStats(stats.episodes, stats.passed, True)

    def stats(self, task_id: str) -> TaskStats:
        with self._lock:
            stats = self._stats.get(task_id, TaskStats())
            return TaskStats(stats.episodes, stats.passed, stats.hardening_requested)

    def weight(self, task_id: str) -> float:
        stats = self.stats(task_id)
        if stats.episodes < self.min_episodes:
            return UNTRIED_WEIGHT
        low, high = self.band
        return IN_BAND_WEIGHT if low <= stats.pass_rate <= high else OUT_OF_BAND_WEIGHT

    def choose(self, entries: Sequence[TaskEntry], spec: SampleSpec) -> TaskEntry:
        matching = [e for e in entries if _matches(e, spec)]
        if not matching:
            raise NoTaskMatches(f"no validated task matches {spec.model_dump(exclude_none=True)}",
                                spec=spec.model_dump(exclude_none=True))
        rng = random.Random(spec.seed) if spec.seed is not None else random.SystemRandom()
        by_family: dict[str, list[TaskEntry]] = defaultdict(list)
        for entry in sorted(matching, key=lambda e: e.task_id):
            by_family[entry.family].append(entry)
        family = rng.choice(sorted(by_family))
        tasks = by_family[family]
        return rng.choices(tasks, weights=[self.weight(t.task_id) for t in tasks], k=1)[0]


def _matches(entry: TaskEntry, spec: SampleSpec) -> bool:
    return (
        (spec.family is None or entry.family == spec.family)
        and (spec.category is None or entry.category == spec.category)
        and (spec.difficulty is None or entry.difficulty == spec.difficulty)
    )
