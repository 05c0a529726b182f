"""Gate: by execution, the verifier fails the untouched workspace (``v(x0) = 0``) and passes the
reference solution's result (``v(Exec(rho)) = 1``)."""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SandboxError
from skillgym_core.sandbox.base import SandboxResult
from skillgym_core.sandbox.workspace import read_regular_file
from skillgym_core.taskrun import TaskRunner, VerifierOutcome

from skillgym_reviewer.report import GateResult


@dataclass
class Evidence:
    """What executing the task showed; the probes start from ``solved_workspace``."""

    initial: VerifierOutcome
    solution_run: SandboxResult
    solved: VerifierOutcome
    initial_workspace: Path
    solved_workspace: Path

    def outputs(self) -> dict[str, bytes]:
        """Files the reference solution created or changed (relative path -> content)."""
        return changed_files(self.initial_workspace, self.solved_workspace)


MAX_FILE_BYTES = 64 * 1024 * 1024


def workspace_files(root: Path) -> dict[str, bytes]:
    """Regular files under a sandbox-written tree, read without following links."""
    files: dict[str, bytes] = {}
    for dirpath, _dirs, names in os.walk(root, followlinks=False):
        for name in sorted(names):
            path = Path(dirpath) / name
            data = read_regular_file(path, max_bytes=MAX_FILE_BYTES)
            if data is not None:
                files[path.relative_to(root).as_posix()] = data
    return dict(sorted(files.items()))


def changed_files(before: Path, after: Path) -> dict[str, bytes]:
    """Files of ``after`` that ``before`` lacks or holds with other content."""
    digests = file_digests(before)
    return {rel: data for rel, data in workspace_files(after).items() if digests.get(rel) != hashlib.sha256(data).hexdigest()}


def file_digests(root: Path) -> dict[str, str]:
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in workspace_files(root).items()}


def checker_crashed(outcome: VerifierOutcome) -> str | None:
    """Why the verifier itself broke (not the answer it judged), or None. A sandbox that failed
    is the machine's trouble, not the task's: it is raised (and retried), never held against it."""
    if outcome.failure_type == "tampered_inputs":
        return None
    if outcome.failure_type == "verifier_sandbox_error":
        raise SandboxError(f"the sandbox failed while verifying: {outcome.detail or outcome.failure_type}",
                           reason="verifier_sandbox_error")
    result = outcome.result
    if outcome.failure_type and outcome.failure_type.startswith("verifier_") and outcome.failure_type != "verifier_rejected":
        return f"verifier run ended with {outcome.failure_type}"
    exited = (
        f"verifier exited {result.exit_code}: {result.stderr.strip()[-400:]}"
        if result is not None and result.exit_code not in (0, None)
        else None
    )
    if outcome.failure_type == "reward_file_missing":
        missing = "verifier wrote no parseable /logs/verifier/reward.txt or reward.json"
        return f"{missing}; {exited}" if exited else missing
    return exited


def rerun_rewards(task: TaskDir, runner: TaskRunner, workspace: Path, reruns: int) -> list[float | None]:
    """The verifier's rewards on one final workspace, run again with fixed, different hash seeds
    (set and dict-of-set orders change between them, as they do between real runs)."""
    return [runner.verify(task, workspace, extra_env={"PYTHONHASHSEED": str(seed)}).reward
            for seed in range(1, reruns + 1)]


def flaky_reason(first: float | None, again: list[float | None]) -> str | None:
    rewards = [first, *again]
    if len(set(rewards)) <= 1:
        return None
    return f"flaky verifier: rewards {rewards} on the same reference result in {len(rewards)} runs"


def run_validity(
    task: TaskDir, runner: TaskRunner, workdir: Path, *, reruns: int = 0
) -> tuple[GateResult, Evidence | None]:
    initial_ws = runner.fresh_workspace(task, workdir)
    solved_ws = runner.fresh_workspace(task, workdir)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="validity") as pool:
        # the untouched workspace is judged while the reference solution runs
        judged_initial = pool.submit(runner.verify, task, initial_ws)
        run = runner.run_solution(task, solved_ws)
        initial = judged_initial.result()
    crash = checker_crashed(initial)
    if crash:
        return GateResult.fail("validity", "checker_error", [f"on the initial workspace: {crash}"],
                               initial=initial.to_dict()), None
    if initial.passed:
        return GateResult.fail(
            "validity", "too_lax",
            [f"verifier passes the untouched workspace (reward {initial.reward})"], initial=initial.to_dict()
        ), None
    if not run.ok:
        return GateResult.fail(
            "validity", "environment_error",
            [f"reference solution failed ({run.outcome.value}, exit {run.exit_code}): {run.stderr.strip()[-400:]}"],
            initial=initial.to_dict(),
        ), None
    solved = runner.verify(task, solved_ws)
    evidence = Evidence(initial, run, solved, initial_ws, solved_ws)
    crash = checker_crashed(solved)
    if crash:
        return GateResult.fail("validity", "checker_error", [f"on the reference solution: {crash}"],
                               solved=solved.to_dict()), evidence
    flaky = flaky_reason(solved.reward, rerun_rewards(task, runner, solved_ws, reruns)) if reruns else None
    if flaky:
        return GateResult.fail("validity", "checker_error", [flaky], solved=solved.to_dict()), evidence
    if solved.failure_type == "tampered_inputs":
        return GateResult.fail("validity", "checker_error",
                               [f"reference solution modifies protected inputs {solved.tampered}"]), evidence
    if not solved.passed:
        return GateResult.fail(
            "validity", "checker_error",
            [f"verifier rejects the reference solution (reward {solved.reward}, items {solved.rewards})"],
            solved=solved.to_dict(),
        ), evidence
    return GateResult.ok(
        "validity", initial_reward=initial.reward, solved_reward=solved.reward,
        solution_seconds=round(run.duration_s, 3), outputs=sorted(evidence.outputs()),
    ), evidence
