"""The mutation score: of the wrong trajectories tried, the share the verifier rejected, in
total and per rubric item (which items' scores dropped below 1 on each rejected one)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillgym_core.taskrun import VerifierOutcome

from skillgym_reviewer.gates.mutation.model import TrialResult, Verdict
from skillgym_reviewer.gates.validity import checker_crashed

WHOLE_REWARD = "reward"
# A verifier reports the checks inside a composite item as "item:check" (the rubric runner's
# ``share``); each is judged like an item, so a check that accepts anything is named.
PART = ":"
SCORED = (None, "verifier_rejected")  # outcomes where the verifier itself scored every item


def rubric_items(solved: VerifierOutcome) -> list[str]:
    """The programmatic rubric items of the task (LLM-judged items are not the verifier's code);
    a verifier that writes only a total has the one item ``reward``."""
    judged = {item.get("id") for item in (solved.rubric or {}).get("items", []) if item.get("method") == "llm_judge"}
    names = sorted(name for name in solved.rewards if name != WHOLE_REWARD and name not in judged)
    return names or [WHOLE_REWARD]


def judge(outcome: VerifierOutcome, items: Sequence[str]) -> tuple[Verdict, list[str], str]:
    """The verdict on one wrong trajectory, the items that caught it, and a note."""
    crash = checker_crashed(outcome)
    if crash:
        return "crashed", [], crash
    if outcome.passed:
        return "survived", [], ""
    if outcome.failure_type not in SCORED:
        return "killed", [], str(outcome.failure_type)
    if items == [WHOLE_REWARD]:
        return "killed", [WHOLE_REWARD], ""
    return "killed", [name for name in items if _failed(outcome.rewards, name)], ""


def _failed(rewards: dict[str, float], name: str) -> bool:
    """An item absent from the rewards failed; a check inside an item failed only where it was
    scored (its item may have stopped before it on malformed output)."""
    if PART in name:
        return name in rewards and rewards[name] < 1.0
    return rewards.get(name, 0.0) < 1.0


@dataclass
class MutationScore:
    """``unscored``: trials that count for the items they fail but not for the score (the
    coverage mutants: adding them must not water the score down)."""

    items: list[str]
    results: list[TrialResult]
    unscored: frozenset[str] = frozenset()
    item_kills: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kills: Counter[str] = Counter()
        for result in self.results:
            if result.verdict == "killed":
                kills.update(set(result.failed_items))
        self.item_kills = {name: kills.get(name, 0) for name in self.items}

    @property
    def scored(self) -> list[TrialResult]:
        return [r for r in self.results if r.name not in self.unscored]

    @property
    def tried(self) -> int:
        return sum(1 for r in self.scored if r.counted)

    @property
    def killed(self) -> int:
        return sum(1 for r in self.scored if r.verdict == "killed")

    @property
    def score(self) -> float | None:
        return round(self.killed / self.tried, 4) if self.tried else None

    @property
    def survivors(self) -> list[str]:
        return [r.name for r in self.scored if r.verdict == "survived"]

    @property
    def unkilled_items(self) -> list[str]:
        return [name for name, kills in self.item_kills.items() if kills == 0]

    def count(self, verdict: Verdict) -> int:
        return sum(1 for r in self.results if r.verdict == verdict)

    def shortfalls(self, min_score: float, every_item: bool) -> list[str]:
        """Why the verifier is too lax under the thresholds; empty when it is strong enough."""
        reasons = []
        if self.score is not None and self.score < min_score:
            shown = ", ".join(self.survivors[:12]) + (" ..." if len(self.survivors) > 12 else "")
            reasons.append(f"mutation score {self.score:.2f} < {min_score:.2f}: the verifier accepts "
                           f"{len(self.survivors)} of {self.tried} wrong results: {shown}")
        items = [name for name in self.unkilled_items if PART not in name]
        checks = [name for name in self.unkilled_items if PART in name]
        if every_item and items:
            reasons.append(f"rubric items that never failed on a wrong result: {', '.join(items)}"
                           " (their checks accept anything the mutants tried)")
        if every_item and checks:
            reasons.append(f"checks inside rubric items that never failed on a wrong result: {', '.join(checks)}"
                           " (each accepts anything the mutants tried; its item's share hides it)")
        return reasons

    def summary(self) -> dict[str, Any]:
        per_kind: dict[str, dict[str, int]] = {}
        for result in self.results:
            row = per_kind.setdefault(result.kind, {"tried": 0, "killed": 0})
            row["tried"] += result.counted
            row["killed"] += result.verdict == "killed"
        return {
            "score": self.score, "tried": self.tried, "killed": self.killed, "survivors": self.survivors,
            "equivalent": self.count("equivalent"), "not_run": self.count("not_run"), "crashed": self.count("crashed"),
            "coverage_trials": len(self.results) - len(self.scored),
            "items": {name: {"kills": kills, "share": round(kills / self.tried, 4) if self.tried else None}
                      for name, kills in self.item_kills.items()},
            "unkilled_items": self.unkilled_items, "by_kind": per_kind,
        }  # fmt: skip
