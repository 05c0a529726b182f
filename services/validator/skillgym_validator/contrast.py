"""Skill dependence: the baseline agent runs k times with the skill mounted (pass rate r+) and
k times without (r-). A task is **skill-dep** when r+ >= ``min_with`` and r- <= ``max_without``
(by default r+ = 1 and r- = 0), otherwise **verifier-passed**. Across a task set, McNemar's
exact test asks whether "solved only with the skill" outnumbers "solved only without" by more
than chance."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.llm import Usage

from skillgym_validator.baseline import AgentRun, BaselineAgent

SKILL_DEP = "skill-dep"
VERIFIER_PASSED = "verifier-passed"


@dataclass(frozen=True)
class LabelRule:
    min_with: float = 1.0
    max_without: float = 0.0

    def label(self, r_plus: float, r_minus: float) -> str:
        return SKILL_DEP if r_plus >= self.min_with and r_minus <= self.max_without else VERIFIER_PASSED


@dataclass
class ContrastResult:
    r_plus: float
    r_minus: float
    label: str
    runs: list[AgentRun] = field(default_factory=list)

    @property
    def solved_with(self) -> bool:
        """The per-task paired outcome McNemar uses: solved in most runs with the skill."""
        return self.r_plus >= 0.5

    @property
    def solved_without(self) -> bool:
        return self.r_minus >= 0.5

    def usage(self) -> Usage:
        """The baseline model's tokens (and cost) over every run of the contrast."""
        total = Usage()
        for run in self.runs:
            total.add(run.usage)
        return total

    def to_dict(self, *, include_transcripts: bool = False) -> dict[str, Any]:
        return {
            "r_plus": self.r_plus,
            "r_minus": self.r_minus,
            "label": self.label,
            "usage": self.usage().to_dict(),
            "runs": [run.to_dict(include_transcript=include_transcripts) for run in self.runs],
        }


def skill_contrast(agent: BaselineAgent, task: TaskDir, scratch: Path, *, k: int, rule: LabelRule) -> ContrastResult:
    runs = []
    for _ in range(k):
        runs.append(agent.attempt(task, scratch, with_skill=True))
        runs.append(agent.attempt(task, scratch, with_skill=False))
    with_rate = sum(r.passed for r in runs if r.with_skill) / k
    without_rate = sum(r.passed for r in runs if not r.with_skill) / k
    return ContrastResult(with_rate, without_rate, rule.label(with_rate, without_rate), runs)


def binomial_two_sided_p(successes: int, trials: int) -> float:
    """Exact two-sided p-value of ``successes`` in ``trials`` fair coin flips (doubling the
    smaller tail, capped at 1), computed with integers so large counts stay exact."""
    if trials == 0:
        return 1.0
    low = min(successes, trials - successes)
    tail = sum(math.comb(trials, i) for i in range(low + 1))
    return min(1.0, 2 * tail / 2**trials)


@dataclass(frozen=True)
class McNemarResult:
    only_with: int
    only_without: int
    both: int
    neither: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "only_with": self.only_with,
            "only_without": self.only_without,
            "both": self.both,
            "neither": self.neither,
            "discordant": self.only_with + self.only_without,
            "p_value": self.p_value,
        }


def mcnemar_exact(pairs: Iterable[tuple[bool, bool]]) -> McNemarResult:
    """``pairs``: (solved with the skill, solved without it), one per task."""
    counts = {(True, False): 0, (False, True): 0, (True, True): 0, (False, False): 0}
    for with_skill, without_skill in pairs:
        counts[(bool(with_skill), bool(without_skill))] += 1
    only_with, only_without = counts[(True, False)], counts[(False, True)]
    return McNemarResult(
        only_with=only_with,
        only_without=only_without,
        both=counts[(True, True)],
        neither=counts[(False, False)],
        p_value=binomial_two_sided_p(only_with, only_with + only_without),
    )
