"""Trivial-task validations per minute: the validity gate on a task whose solution and verifier
are one-liners, so the cost measured is SkillGym's own (workspace copies, checksums, sandbox
start-up, reward parsing), side by side with a naive peer doing the same phases with
``shutil.copytree`` and the bare ``timeout`` + ``prlimit`` + ``bwrap`` chain started by root (no
user namespace, no seccomp, links copied as links, no storage volumes).

One validation = nop verify + oracle solve + oracle verify (``oracle_runs=1``); the service's
default gate (``oracle_runs=2``) is measured too.
Run: ``python benchmarks/validation_bench.py [--tasks 60]``; writes
``benchmarks/results/validation_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/validator", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_core.contracts.task import TaskDir  # noqa: E402
from skillgym_core.reward import read_reward  # noqa: E402
from skillgym_core.sandbox import janitor  # noqa: E402
from skillgym_core.sandbox.base import Limits, Mount  # noqa: E402
from skillgym_core.sandbox.local import LocalSandbox  # noqa: E402
from skillgym_core.taskrun import TaskRunner  # noqa: E402
from skillgym_validator.gate import ValidityGate  # noqa: E402

from benchmarks.bare_bwrap import bare_chain  # noqa: E402
from tests.validator.tasks import make_task  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "validation_bench.json"


def _chain(command: list[str], mounts: list[Mount], limits: Limits) -> int:
    return bare_chain(command, mounts, limits).run()


def naive_validation(task: TaskDir, scratch: Path) -> bool:
    """The same three phases with no hardening: plain copies and the bare chain."""
    limits = Limits(wall_s=30, memory_mb=512)
    verdicts = []
    for solve in (False, True):
        workspace = Path(tempfile.mkdtemp(dir=scratch))
        shutil.copytree(task.workspace, workspace, dirs_exist_ok=True)
        if solve:
            _chain(
                ["bash", "/solution/solve.sh"],
                [Mount(workspace, "/app", True), Mount(task.solution, "/solution")],
                limits,
            )
        trusted, logs = Path(tempfile.mkdtemp(dir=scratch)), Path(tempfile.mkdtemp(dir=scratch))
        shutil.copytree(workspace, trusted, dirs_exist_ok=True)
        (logs / "verifier").mkdir()
        mounts = [Mount(trusted, "/app", True), Mount(task.tests, "/tests"), Mount(logs, "/logs", True)]
        _chain(["bash", "/tests/test.sh"], mounts, limits)
        parsed = read_reward(logs / "verifier")
        verdicts.append(parsed is not None and parsed[0] >= 1.0)
        for path in (workspace, trusted, logs):
            shutil.rmtree(path)
    return verdicts == [False, True]


def rate(label: str, validate: Any, tasks: list[TaskDir], scratch: Path) -> dict[str, Any]:
    validate(tasks[0], scratch)
    started = time.perf_counter()
    valid = sum(1 for task in tasks if validate(task, scratch))
    janitor.wait_idle()  # background cleanup counts too
    seconds = time.perf_counter() - started
    return {
        "method": label,
        "tasks": len(tasks),
        "valid": valid,
        "seconds": round(seconds, 3),
        "ms_per_validation": round(seconds / len(tasks) * 1000, 2),
        "validations_per_minute": round(len(tasks) / seconds * 60, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=60)
    args = parser.parse_args()
    runner = TaskRunner(LocalSandbox())
    one = ValidityGate(runner, oracle_runs=1)
    two = ValidityGate(runner, oracle_runs=2)
    with tempfile.TemporaryDirectory(prefix="validation-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        tasks = [make_task(scratch / f"task{i}", name=f"t{i}", inputs=(i, i + 1)) for i in range(args.tasks)]
        rows = [
            rate("skillgym_gate_nop_oracle", lambda t, s: one.check(t, s).valid, tasks, scratch),
            rate("naive_bwrap_chain_nop_oracle", naive_validation, tasks, scratch),
            rate("skillgym_gate_nop_oracle_x2", lambda t, s: two.check(t, s).valid, tasks, scratch),
        ]
    ours = rows[0]["validations_per_minute"]
    result = {
        "benchmark": "validation_bench",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "loadavg": os.getloadavg()},
        "results": rows,
        "ratio_skillgym_to_naive": round(ours / rows[1]["validations_per_minute"], 3),
        "target_validations_per_minute": 300,
        "meets_target": ours >= 300,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
