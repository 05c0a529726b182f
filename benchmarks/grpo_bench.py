"""A longer GRPO run than the tests': SmolLM2-135M on CPU against the environment server (a real
process) serving a validated task, with the policy free to act (no forced calls). Reports the
reward curve (mean and spread per step), tool calls per rollout, completion lengths and the time
per step.

Run: ``python -m benchmarks.grpo_bench [--steps 6] [--generations 4]``; writes
``benchmarks/results/grpo_bench.json``. About a minute per step on two quiet cores."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/trainer", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_core.store.local import LocalStore  # noqa: E402
from skillgym_trainer.rl.grpo import GrpoOptions, run_grpo  # noqa: E402

from tests.support.env_server import start_env_server  # noqa: E402
from tests.support.validated_tasks import publish_validated  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "grpo_bench.json"
TASK = "task-ledger0001"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--max-completion-tokens", type=int, default=128)
    parser.add_argument("--reward", choices=["binary", "rubric", "shaped"], default="shaped")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="grpo-bench-") as scratch:
        tmp = Path(scratch)
        publish_validated(LocalStore(tmp / "store"), tmp / "tasks")
        with start_env_server(tmp / "server", tmp / "store") as server:
            report = run_grpo(GrpoOptions(
                env_url=server.base_url, task_ids=[TASK], out_dir=tmp / "grpo", steps=args.steps,
                num_generations=args.generations, max_completion_length=args.max_completion_tokens,
                max_tool_calls=2, reward=args.reward, save_model=False, policy="grpo-bench", progress=True,
            ))  # fmt: skip
    result = {
        "benchmark": "grpo_bench",
        "machine": {"cpus": os.cpu_count(), "loadavg": list(os.getloadavg())},
        "model": "SmolLM2-135M-Instruct (CPU, fp32)",
        "task": "the ledger task: total a CSV column into total.txt",
        "settings": vars(args),
        "curve": [point.model_dump() for point in report.curve],
        "episodes_played": report.episodes_played,
        "episodes_passed": report.episodes_passed,
        "failed_episodes": report.failed_episodes,
        "mean_reward": report.mean_reward,
        "wall_time_s": report.wall_time_s,
        "seconds_per_step": round(report.wall_time_s / max(1, len(report.curve)), 2),
        "tool_calls_per_episode": round(sum(r.steps for r in report.episodes) / max(1, len(report.episodes)), 3),
        "malformed_calls": sum(r.malformed_calls for r in report.episodes),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("curve", "mean_reward", "seconds_per_step")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
