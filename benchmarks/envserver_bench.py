"""The environment server against the bare sandbox doing the same work, side by side:

- step latency: ``bash`` ``echo hi`` through ``POST /v1/episodes/{id}/step`` (HTTP, a separate
  server process) against ``TaskRunner.run_agent_command`` of the same command on the same kind
  of workspace in this process (target: at most 1.5 times);
- episode start latency: ``POST /v1/episodes`` against ``TaskRunner.fresh_workspace``;
- finished trivial episodes per minute (start, one step that does the task, verify), with
  ``--clients`` concurrent clients, against the bare runner doing the same with as many threads
  (target: ≥ 300 per minute).

Rounds alternate between the two so machine load hits them alike; medians are reported.
Run: ``python -m benchmarks.envserver_bench [--rounds 60] [--seconds 30] [--clients 2]``; writes
``benchmarks/results/envserver_bench.json``."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_core.rlenv import EnvClient  # noqa: E402
from skillgym_core.sandbox.janitor import remove_tree  # noqa: E402
from skillgym_core.sandbox.local import LocalSandbox  # noqa: E402
from skillgym_core.store.local import LocalStore  # noqa: E402
from skillgym_core.taskrun import TaskRunner  # noqa: E402
from tqdm import tqdm  # noqa: E402

from tests.support.env_server import start_env_server  # noqa: E402
from tests.support.validated_tasks import REFERENCE_COMMANDS, publish_validated  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "envserver_bench.json"
TASK = "task-ledger0001"
SOLVE = REFERENCE_COMMANDS[1]


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": round(statistics.median(ordered) * 1000, 2),
            "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 2), "n": len(ordered)}


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def latencies(client: EnvClient, runner: TaskRunner, task_root: Path, work: Path, rounds: int) -> dict[str, Any]:
    from skillgym_core.contracts.task import TaskDir

    task = TaskDir(task_root)
    workspace = runner.fresh_workspace(task, work)
    episode = client.start(task_id=TASK, max_steps=1000).episode_id
    samples: dict[str, list[float]] = {"server_step": [], "bare_step": [], "server_start": [], "bare_start": []}
    for _ in tqdm(range(rounds), desc="latency rounds", unit="round"):
        samples["server_step"].append(_timed(lambda: client.step(episode, "bash", {"command": "echo hi"})))
        samples["bare_step"].append(_timed(lambda: runner.run_agent_command(task, workspace, "echo hi")))
        started = time.perf_counter()
        opened = client.start(task_id=TASK).episode_id
        samples["server_start"].append(time.perf_counter() - started)
        client.delete(opened)
        started = time.perf_counter()
        made = runner.fresh_workspace(task, work)
        samples["bare_start"].append(time.perf_counter() - started)
        remove_tree(made)
    client.delete(episode)
    remove_tree(workspace)
    summary = {name: _ms(values) for name, values in samples.items()}
    summary["step_ratio"] = round(summary["server_step"]["median_ms"] / summary["bare_step"]["median_ms"], 3)
    summary["start_ratio"] = round(summary["server_start"]["median_ms"] / summary["bare_start"]["median_ms"], 3)
    return summary


def _throughput(one: Callable[[], bool], clients: int, seconds: float, label: str) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    finished, failed = [0], [0]
    lock = threading.Lock()

    def loop() -> None:
        while time.monotonic() < deadline:
            ok = one()
            with lock:
                finished[0] += ok
                failed[0] += not ok

    started = time.monotonic()
    threads = [threading.Thread(target=loop, name=f"{label}-{i}") for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.monotonic() - started
    return {"episodes": finished[0], "not_passed": failed[0], "seconds": round(took, 2),
            "per_minute": round(60 * finished[0] / took, 1)}


def throughput(base_url: str, runner: TaskRunner, task_root: Path, work: Path, clients: int,
               seconds: float) -> dict[str, Any]:
    from skillgym_core.contracts.task import TaskDir

    task = TaskDir(task_root)
    local = threading.local()

    def via_server() -> bool:
        if not hasattr(local, "client"):
            local.client = EnvClient(base_url)
        episode = local.client.start(task_id=TASK).episode_id
        local.client.step(episode, "bash", {"command": SOLVE})
        return bool(local.client.finish(episode).passed)

    def bare() -> bool:
        workspace = runner.fresh_workspace(task, work)
        try:
            runner.run_agent_command(task, workspace, SOLVE)
            return runner.verify(task, workspace).passed
        finally:
            remove_tree(workspace)

    results: dict[str, Any] = {"server": [], "bare": []}
    for _ in tqdm(range(2), desc="throughput rounds", unit="round"):
        results["server"].append(_throughput(via_server, clients, seconds / 2, "server"))
        results["bare"].append(_throughput(bare, clients, seconds / 2, "bare"))
    per_minute = {k: round(statistics.median(r["per_minute"] for r in v), 1) for k, v in results.items()}
    return {"rounds": results, "per_minute": per_minute,
            "ratio_to_bare": round(per_minute["server"] / per_minute["bare"], 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=30.0, help="throughput time per side")
    parser.add_argument("--clients", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="envserver-bench-") as scratch:
        tmp = Path(scratch)
        store = LocalStore(tmp / "store")
        publish_validated(store, tmp / "tasks")
        task_root = tmp / "tasks" / TASK
        work = tmp / "bare"
        work.mkdir()
        runner = TaskRunner(LocalSandbox())
        with start_env_server(tmp / "server", tmp / "store", max_open_episodes=64) as server, \
                EnvClient(server.base_url) as client:
            latency = latencies(client, runner, task_root, work, args.rounds)
            rate = throughput(server.base_url, runner, task_root, work, args.clients, args.seconds)
    report = {
        "benchmark": "envserver_bench",
        "machine": {"cpus": os.cpu_count(), "loadavg": list(os.getloadavg())},
        "task": "a trivial ledger task: one awk command, a shell verifier",
        "clients": args.clients,
        "latency": latency,
        "throughput": rate,
        "targets": {"step_ratio_max": 1.5, "episodes_per_minute_min": 300},
        "meets_targets": {"step_ratio": latency["step_ratio"] <= 1.5,
                          "episodes_per_minute": rate["per_minute"]["server"] >= 300},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("latency", "throughput", "meets_targets")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
