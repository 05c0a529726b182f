"""Report throughput and memory over synthetic trajectories of realistic size, side by side with
raw tiktoken encoding of the same text.

Each synthetic run is a stored ATIF trajectory plus verification record shaped like the SkillGym
paper's passed runs: about 35 agent steps, about 50 tool calls and about 60k o200k_base tokens
(reasoning ~36%, tool output ~34%, tool calls ~20%, the rest messages). For each corpus size,
in fresh processes so peak RSS is clean:

- ``report``: ``build_report`` end to end (stream every record and document from the local store,
  measure, tokenize, aggregate, write JSON + HTML + PNG plots);
- ``raw``: the peer: read the same documents, extract the same four texts per trajectory
  (untimed), and time only ``encode_ordinary`` on them; the ratio report/raw is the overhead.

Memory is the peak RSS of the report process at two sizes (flat = streaming works). The full
10,000-trajectory corpus is ~2.5 GB of JSON and hours of tokenization on this shared 2-core
machine, so by default smaller corpora are run and per-trajectory costs are extrapolated to
10,000 (stated in the results).

Run: ``python benchmarks/report_bench.py [--sizes 100 400] [--target 10000] [--repeats 3]``; writes
``benchmarks/results/report_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/sampler", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

RESULTS = ROOT / "benchmarks" / "results" / "report_bench.json"
_VOCABULARY = (
    "the of to and a in is it you that he was for on are with as I his they be at one have this from or had by "
    "file data value total ledger config error result check output input path test build run value sum column row "
    "parse json yaml csv python bash awk sed grep import def return class self print open read write list dict "
    "function variable module package install version update verify expected actual failed passed status"
)
WORDS = _VOCABULARY.split(" ")


def _text(rng: random.Random, words: int) -> str:
    chunk = rng.choices(WORDS, k=words)
    lines = [" ".join(chunk[i:i + 14]) for i in range(0, len(chunk), 14)]
    return "\n".join(lines)


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        name = rng.choice(WORDS)
        out.append(f"    {name}_{i} = compute_{rng.choice(WORDS)}({rng.randint(0, 999)}, '{rng.choice(WORDS)}')")
    return "\n".join(out)


def synthetic_trajectory(index: int, rng: random.Random) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "source": "system", "message": _text(rng, 400)},
        {"step_id": 2, "source": "user", "message": _text(rng, 250)},
    ]
    calls = 0
    for turn in range(38):
        n_calls = 0 if turn == 37 else 1 if rng.random() < 0.62 else 2
        tool_calls, results = [], []
        for k in range(n_calls):
            call_id = f"call_{turn}_{k}"
            command = f"cat > step_{turn}_{k}.py <<'PY'\n{_code(rng, 9)}\nPY\npython3 step_{turn}_{k}.py"
            tool_calls.append({"tool_call_id": call_id, "function_name": "bash", "arguments": {"command": command}})
            results.append({"source_call_id": call_id, "content": _text(rng, 330) + "\n" + _code(rng, 4)})
        calls += n_calls
        step: dict[str, Any] = {
            "step_id": len(steps) + 1, "source": "agent", "message": _text(rng, 45),
            "reasoning_content": _text(rng, 590),
            "metrics": {"prompt_tokens": 2000 + 1500 * turn, "completion_tokens": 700},
        }
        if tool_calls:
            step["tool_calls"] = tool_calls
            step["observation"] = {"results": results}
        steps.append(step)
    return {"schema_version": "ATIF-v1.7", "session_id": f"s{index}", "trajectory_id": f"traj-{index:06d}",
            "agent": {"name": "builtin", "version": "1.0", "model_name": f"teacher-{index % 3}"},
            "steps": steps, "final_metrics": {"total_steps": len(steps)}}


def generate(store_root: Path, count: int, seed: int = 7) -> dict[str, float]:
    from skillgym_core import keys
    from skillgym_core.store.local import LocalStore

    store = LocalStore(store_root)
    rng = random.Random(seed)
    total_bytes = 0
    for index in range(count):
        doc = synthetic_trajectory(index, rng)
        data = json.dumps(doc).encode()
        total_bytes += len(data)
        trajectory_id = doc["trajectory_id"]
        store.put_bytes(keys.trajectory_atif(trajectory_id), data)
        record = {"schema_version": "1.0", "trajectory_id": trajectory_id, "task_id": f"task-{index % 400}",
                  "harness": "builtin", "model": doc["agent"]["model_name"], "prompt_variant": "default",
                  "skill_provided": index % 2 == 0, "reward": 1.0, "rewards": {"reward": 1.0}, "passed": True,
                  "category": ["data", "docs", "devops", "science"][index % 4], "skill_read": index % 3 == 0}
        store.put_bytes(keys.trajectory_verification(trajectory_id), json.dumps(record).encode())
    return {"bytes": total_bytes}


def child_report(store_root: str, out_dir: str, workers: str = "1") -> dict[str, Any]:
    from skillgym_sampler.report import build_report
    from skillgym_sampler.report.tokens import encoding

    encoding()
    cpu_started = time.process_time()
    started = time.perf_counter()
    report = build_report(Path(store_root), Path(out_dir), workers=int(workers))
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "cpu_seconds": time.process_time() - cpu_started, "compute_seconds": report["compute_seconds"], "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "passed_runs": report["funnel"]["passed_runs"],
            "tokens_total": sum(report["overall"]["token_totals"].values()),
            "tool_calls_mean": report["overall"]["length"]["tool_calls"]["mean"],
            "tokens_median": report["overall"]["length"]["tokens"]["median"],
            "composition": report["overall"]["token_composition"]}


def child_raw(store_root: str) -> dict[str, Any]:
    from skillgym_core.store.local import LocalStore
    from skillgym_sampler.report.stats import split_text
    from skillgym_sampler.report.tokens import encoding

    enc = encoding()
    store = LocalStore(Path(store_root))
    encode_seconds = encode_cpu = 0.0
    tokens = 0
    for key in store.list("trajectories/"):
        if not key.endswith("/atif.json"):
            continue
        texts = split_text(json.loads(store.get_bytes(key)))[0]
        cpu_started, started = time.process_time(), time.perf_counter()
        for text in texts.values():
            tokens += len(enc.encode_ordinary(text))
        encode_seconds += time.perf_counter() - started
        encode_cpu += time.process_time() - cpu_started
    return {"seconds": encode_seconds, "cpu_seconds": encode_cpu, "tokens_total": tokens}


def _run_child(*args: str) -> dict[str, Any]:
    output = subprocess.run([sys.executable, __file__, "--child", *args], check=True, capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return dict(json.loads(output.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs=2, default=[100, 400])
    parser.add_argument("--target", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1, help="tokenizer threads of the report (0: inline)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--child", nargs="+")
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = child_report(*rest) if kind == "report" else child_raw(*rest)
        print(json.dumps(result))
        return
    work = Path(tempfile.mkdtemp(prefix="report-bench-"))
    rows = []
    try:
        for size in args.sizes:
            store_root = work / f"store-{size}"
            generated = generate(store_root, size)
            # alternate the two, several times: the machine is shared, so keep each one's best run
            raws, reports = [], []
            for _ in range(args.repeats):
                raws.append(_run_child("raw", str(store_root)))
                reports.append(_run_child("report", str(store_root), str(work / f"out-{size}"), str(args.workers)))
            raw = min(raws, key=lambda r: r["seconds"])
            report = min(reports, key=lambda r: r["seconds"])
            raw_cpu = min(r["cpu_seconds"] for r in raws)
            report_cpu = min(r["cpu_seconds"] for r in reports)
            report["peak_rss_mb"] = max(r["peak_rss_mb"] for r in reports)
            assert raw["tokens_total"] == report["tokens_total"], "report and peer counted different text"
            rows.append({
                "trajectories": size,
                "json_mb": round(generated["bytes"] / 1e6, 1),
                "tokens_per_trajectory": round(report["tokens_total"] / size),
                "tool_calls_per_trajectory": report["tool_calls_mean"],
                "composition": report["composition"],
                "report_seconds": round(report["seconds"], 2),
                "report_seconds_without_plots": round(report["compute_seconds"], 2),
                "raw_tiktoken_seconds": round(raw["seconds"], 2),
                "ratio_report_to_raw": round(report["seconds"] / raw["seconds"], 3),
                "report_cpu_seconds": round(report_cpu, 2),
                "raw_tiktoken_cpu_seconds": round(raw_cpu, 2),
                "cpu_ratio_report_to_raw": round(report_cpu / raw_cpu, 3),
                "runs_seconds": {"raw": [round(r["seconds"], 2) for r in raws],
                                 "report": [round(r["seconds"], 2) for r in reports]},
                "report_peak_rss_mb": round(report["peak_rss_mb"], 1),
                "report_ms_per_trajectory": round(1000 * report["seconds"] / size, 2),
            })
            shutil.rmtree(store_root, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    small, large = rows
    # marginal (per-trajectory) costs from the two sizes; the difference cancels fixed costs
    # (imports, plots, HTML), which are then added once at the target size
    span = large["trajectories"] - small["trajectories"]
    report_slope = (large["report_seconds"] - small["report_seconds"]) / span
    raw_slope = (large["raw_tiktoken_seconds"] - small["raw_tiktoken_seconds"]) / span
    report_fixed = max(0.0, large["report_seconds"] - report_slope * large["trajectories"])
    target_report = report_fixed + report_slope * args.target
    target_raw = raw_slope * args.target
    cpu_slope = (large["report_cpu_seconds"] - small["report_cpu_seconds"]) / span
    raw_cpu_slope = (large["raw_tiktoken_cpu_seconds"] - small["raw_tiktoken_cpu_seconds"]) / span
    cpu_fixed = max(0.0, large["report_cpu_seconds"] - cpu_slope * large["trajectories"])
    result = {
        "benchmark": "report_bench",
        "report_tokenizer_threads": args.workers,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_avg_at_end": os.getloadavg()},
        "note": (f"scaled: corpora of {args.sizes} trajectories were run; the {args.target}-trajectory figures are "
                 "extrapolated from the marginal per-trajectory cost between the two sizes plus the report's "
                 "fixed cost (imports, plots, HTML)"),
        "rows": rows,
        "marginal_ms_per_trajectory": {"report": round(1000 * report_slope, 2), "raw_tiktoken": round(1000 * raw_slope, 2),
                                       "ratio": round(report_slope / raw_slope, 3)},
        "report_fixed_seconds": round(report_fixed, 2),
        "extrapolated_target": {
            "trajectories": args.target,
            "report_seconds": round(target_report, 1),
            "raw_tiktoken_seconds": round(target_raw, 1),
            "ratio_report_to_raw": round(target_report / target_raw, 3),
            "overhead": round(target_report / target_raw - 1, 3),
            "cpu_ratio_report_to_raw": round((cpu_fixed + cpu_slope * args.target) / (raw_cpu_slope * args.target), 3),
        },
        "marginal_cpu_ms_per_trajectory": {"report": round(1000 * cpu_slope, 2),
                                           "raw_tiktoken": round(1000 * raw_cpu_slope, 2)},
        "memory_flat": {"sizes": [r["trajectories"] for r in rows],
                        "peak_rss_mb": [r["report_peak_rss_mb"] for r in rows]},
        "target_overhead": 0.25,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
