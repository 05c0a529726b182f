"""Per-run cost of running ``true``, side by side on the same machine:

- a bare ``subprocess.run(["true"])`` (no isolation at all);
- mini-swe-agent's ``LocalEnvironment.execute`` (a peer harness's local runner, no isolation);
- the bare ``timeout`` + ``prlimit`` + ``bwrap`` chain with the same host slice and namespaces
  as ours, started by root (the peer the target is set against);
- the same chain under the unprivileged sandbox uid with a user namespace, and with the
  seccomp filter on top: the cost of each protection, read off separately;
- SkillGym's ``LocalSandbox`` with every protection and every limit on (wall, CPU time, CPU
  quota, memory, pids, file size, output) enforced through cgroup v1 where available.

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

from skillgym_core.sandbox.base import Limits, Mount, Outcome  # noqa: E402
from skillgym_core.sandbox.local import LocalSandbox  # noqa: E402

from benchmarks.bare_bwrap import bare_chain  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "sandbox_bench.json"
ALL_LIMITS = Limits(wall_s=60, cpu_s=30, cpus=1.0, memory_mb=512, pids=128, output_bytes=1_000_000, file_size_mb=64)


def _methods(workspace: Path) -> dict[str, Callable[[], object]]:
    sandbox = LocalSandbox()
    os.chown(workspace, *sandbox.workspace_owner)
    os.chmod(workspace, 0o755)  # the root-started peer drops its capabilities and must still enter it
    mounts = [Mount(workspace, "/app", writable=True)]
    chains = {
        "bwrap_chain": bare_chain(["true"], mounts, ALL_LIMITS),
        "bwrap_chain_userns": bare_chain(["true"], mounts, ALL_LIMITS, userns=True),
        "bwrap_chain_userns_seccomp": bare_chain(["true"], mounts, ALL_LIMITS, userns=True, with_seccomp=True),
    }

    def ours() -> None:
        result = sandbox.run(["true"], mounts=mounts, limits=ALL_LIMITS)
        if result.outcome is not Outcome.OK or result.exit_code != 0:
            raise RuntimeError(f"sandbox run failed: {result}")

    def checked(chain: Any) -> Callable[[], None]:
        def run() -> None:
            if chain.run() != 0:
                raise RuntimeError(f"chain failed: {chain.argv}")

        return run

    methods: dict[str, Callable[[], object]] = {
        "subprocess_true": lambda: subprocess.run(["true"], check=True),
        **{name: checked(chain) for name, chain in chains.items()},
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
    userns, filtered = medians["bwrap_chain_userns"], medians["bwrap_chain_userns_seccomp"]
    return {
        "runs_per_method": runs,
        "median_ms": {k: round(v, 3) for k, v in medians.items()},
        "p90_ms": {k: round(v, 3) for k, v in p90.items()},
        "protection_cost_ms": {
            "user_namespace_and_unprivileged_uid": round(userns - chain, 3),
            "seccomp_filter": round(filtered - userns, 3),
            "skillgym_rest": round(ours - filtered, 3),
        },
        "ratio_local_sandbox_to_bwrap_chain": round(ours / chain, 3),
        "targets": {"ratio_to_chain_max": 1.5},
        "meets_targets": {"ratio_to_chain": ours / chain <= 1.5},
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
            {
                k: result[k]
                for k in ("median_ms", "protection_cost_ms", "ratio_local_sandbox_to_bwrap_chain", "meets_targets")
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
