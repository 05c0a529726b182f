"""Ask the builder to harden tasks that solvers already pass too easily (Skill2Env: reward > 0.7),
for a bounded number of rounds."""

from __future__ import annotations

from collections.abc import Sequence

from skillgym_core.contracts.events import HardeningRequested, TrajectoryVerified

from skillgym_sampler.harness.base import REFERENCE_HARNESSES


def hardening_request(
    runs: Sequence[TrajectoryVerified],
    *,
    task_id: str,
    skill_id: str,
    revision: int,
    threshold: float,
    max_rounds: int,
) -> HardeningRequested | None:
    """A request when the pass rate or mean reward of the solver runs exceeds ``threshold``."""
    solver_runs = [run for run in runs if run.harness not in REFERENCE_HARNESSES]
    if not solver_runs or revision >= max_rounds:
        return None
    pass_rate = sum(run.passed for run in solver_runs) / len(solver_runs)
    mean_reward = sum(run.reward for run in solver_runs) / len(solver_runs)
    if pass_rate <= threshold and mean_reward <= threshold:
        return None
    return HardeningRequested(
        task_id=task_id,
        skill_id=skill_id,
        pass_rate=round(pass_rate, 6),
        round=revision + 1,
        trajectory_keys=sorted(run.atif_key for run in solver_runs if run.passed),
    )
