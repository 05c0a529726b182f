"""Per-run cost of running ``true``, side by side on the same machine:

- a bare ``subprocess.run(["true"])`` (no isolation at all);
- mini-swe-agent's ``LocalEnvironment.execute`` (a peer harness's local runner, no isolation);
- the bare ``timeout`` + ``prlimit`` + ``bwrap`` chain with the same bwrap arguments as ours;
- SkillGym's ``LocalSandbox`` with every limit on (wall, CPU time, CPU quota, memory, pids,
  file size, output) enforced through cgroup v1 where available.

Methods are interleaved round-robin so machine load hits them alike; medians are reported.
Run: ``python benchmarks/sandbox_bench.py [--runs 200]``; writes
``benchmarks/results/sandbox_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_core.sandbox import bwrap  # noqa: E402
from skillgym_core.sandbox.base import Limits, Mount, Outcome  # noqa: E402
from skillgym_core.sandbox.local import LocalSandbox  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "sandbox_bench.json"
ALL_LIMITS = Limits(wall_s=60, cpu_s=30, cpus=1.0, memory_mb=512, pids=128, output_bytes=1_000_000, file_size_mb=64)


def _methods(workspace: Path) -> dict[str, Callable[[], object]]:
    mounts = [Mount(workspace, "/app", writable=True)]
    argv = bwrap.build_argv(["true"], mounts=mounts, workdir="/app", env=None, limits=ALL_LIMITS, info_fd=0, block_fd=0)
    start = argv.index("--info-fd")
    del argv[start : start + 4]
    memory = ALL_LIMITS.memory_mb * 1024 * 1024
    chain = [
        "timeout", "-s", "KILL", str(ALL_LIMITS.wall_s), "prlimit", f"--as={memory}",
        f"--fsize={ALL_LIMITS.file_size_mb << 20}", f"--cpu={ALL_LIMITS.cpu_s}", "--core=0", "--", *argv,
    ]  # fmt: skip
    sandbox = LocalSandbox()

    def ours() -> None:
        result = sandbox.run(["true"], mounts=mounts, limits=ALL_LIMITS)
        if result.outcome is not Outcome.OK or result.exit_code != 0:
            raise RuntimeError(f"sandbox run failed: {result}")

    methods: dict[str, Callable[[], object]] = {
        "subprocess_true": lambda: subprocess.run(["true"], check=True),
        "bwrap_chain": lambda: subprocess.run(chain, check=True, capture_output=True),
        "local_sandbox_all_limits": ours,
    }
    try:
        from minisweagent.environments.local import LocalEnvironment

        env = LocalEnvironment(cwd=str(workspace))
        methods["miniswe_local_environment"] = lambda: env.execute({"command": "true"})
    except ImportError:
        pass
    return methods


def measure(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-") as scratch:
        methods = _methods(Path(scratch))
        samples: dict[str, list[float]] = {name: [] for name in methods}
        for method in methods.values():  # warm caches
            for _ in range(3):
                method()
        for _ in range(runs):
            for name, method in methods.items():
                started = time.perf_counter()
                method()
                samples[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    p90 = {name: sorted(values)[int(len(values) * 0.9)] * 1000 for name, values in samples.items()}
    ours, chain = medians["local_sandbox_all_limits"], medians["bwrap_chain"]
    return {
        "runs_per_method": runs,
        "median_ms": {k: round(v, 3) for k, v in medians.items()},
        "p90_ms": {k: round(v, 3) for k, v in p90.items()},
        "ratio_local_sandbox_to_bwrap_chain": round(ours / chain, 3),
        "targets": {"median_ms_max": 8.0, "ratio_to_chain_max": 1.5},
        "meets_targets": {"median_ms": ours <= 8.0, "ratio_to_chain": ours / chain <= 1.5},
        "sandbox": LocalSandbox().describe(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    result = {
        "benchmark": "sandbox_bench",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "loadavg": os.getloadavg()},
        **measure(args.runs),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(
        json.dumps(
            {k: result[k] for k in ("median_ms", "ratio_local_sandbox_to_bwrap_chain", "meets_targets")}, indent=2
        )
    )


if __name__ == "__main__":
    main()
