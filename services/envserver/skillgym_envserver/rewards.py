"""The reward an episode's client trains on, from the trusted verifier's outcome.

- ``binary``: 1 when the verifier passes the work, else 0.
- ``rubric``: the verifier's graded score r = Σ w_c q_c over the task's weighted rubric items
  (the task's tests write it; a task without a rubric grades 0 or 1, so it equals ``binary``).
- ``shaped``: ``rubric`` minus ``format_penalty`` per malformed tool call, the penalty capped at
  ``format_penalty_cap``: a policy that emits broken calls learns to stop before it learns the task.

Tampered inputs, a verifier that could not run or a refused reward all grade 0 in every mode."""

from __future__ import annotations

from skillgym_core.rlenv.api import RewardMode
from skillgym_core.taskrun import VerifierOutcome


def components(outcome: VerifierOutcome, malformed_calls: int, penalty: float, cap: float) -> dict[str, float]:
    graded = min(1.0, max(0.0, outcome.reward))  # a verifier failure already grades 0
    return {
        "verdict": 1.0 if outcome.passed else 0.0,
        "rubric": graded,
        "format_penalty": min(cap, penalty * malformed_calls),
    }


def reward(mode: RewardMode, parts: dict[str, float]) -> float:
    if mode == "binary":
        return parts["verdict"]
    if mode == "rubric":
        return parts["rubric"]
    return round(parts["rubric"] - parts["format_penalty"], 6)
