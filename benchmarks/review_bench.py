"""Review quality and cost: the full SkillGym reviewer against two weaker peers run on the same
tasks on this machine.

- ``oracle-only``: what an oracle run checks (the reference solution earns reward 1);
- ``validity``: adds ``v(x0) = 0`` by execution (the untouched workspace must fail);
- ``skillgym``: the full reviewer (conformance, validity, leakage, too-lax / too-strict /
  anti-tamper / mutation probes).

Tasks: the defect library (:mod:`tests.reviewer.defects`: sound tasks and tasks with a planted
defect of every kind, each tagged with the failure type it must be rejected with) plus one task
per builder template (sound). Reports, per defect kind and peer, the defects caught (and caught
with the expected failure type), the sound tasks wrongly rejected, and seconds per review
(median, p90). Reviews run one at a time.

Run: ``python -m benchmarks.review_bench`` (writes benchmarks/results/review_bench.json);
``--kinds flaky,good`` and ``--peers skillgym`` narrow a run (the results file says so)."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/builder", "services/reviewer", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_builder import BuilderService, BuilderSettings  # noqa: E402
from skillgym_builder.templates import registry  # noqa: E402
from skillgym_core.archive import unpack_dir  # noqa: E402
from skillgym_core.contracts.events import EnvBuilt, Envelope  # noqa: E402
from skillgym_core.contracts.task import TaskDir  # noqa: E402
from skillgym_core.sandbox.factory import make_sandbox  # noqa: E402
from skillgym_core.sandbox.janitor import remove_tree  # noqa: E402
from skillgym_core.taskrun import TaskRunner  # noqa: E402
from skillgym_reviewer import ReviewerSettings, ReviewReport, review_task_dir  # noqa: E402
from skillgym_reviewer.gates.validity import run_validity  # noqa: E402

from tests.builder.skills import FIXTURES, make_context, put_skill  # noqa: E402
from tests.reviewer.defects import KINDS, LIBRARY  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "review_bench.json"
TEMPLATE_KIND = "template"
PEERS = ("oracle-only", "validity", "skillgym")
MAX_REASONS, REASON_CHARS = 3, 300


def review_task(path: Path, settings: ReviewerSettings) -> ReviewReport:
    """The full reviewer on one task directory (the one place to change if its entry point moves)."""
    return review_task_dir(path, settings)


@dataclass(frozen=True)
class BenchTask:
    name: str
    kind: str
    expected_failure: str | None  # None: a sound task, to be approved
    path: Path

    @property
    def good(self) -> bool:
        return self.expected_failure is None


@dataclass(frozen=True)
class Verdict:
    approved: bool
    failure_type: str | None
    reasons: list[str]
    seconds: float
    gate_seconds: dict[str, float] = field(default_factory=dict)  # the full reviewer's, per gate it ran


def library_tasks(dest: Path, kinds: set[str] | None) -> list[BenchTask]:
    chosen = [task for task in LIBRARY if kinds is None or task.kind in kinds]
    return [BenchTask(task.name, task.kind, task.failure_type, task.write(dest).root) for task in chosen]


def template_tasks(work: Path, dest: Path) -> list[BenchTask]:
    ctx = make_context(work)
    event = put_skill(ctx.store, FIXTURES / "csv-cleanup")
    tasks = []
    for template_id in registry().ids():
        built = BuilderService(ctx, BuilderSettings(preferred_templates=[template_id])).handle(
            Envelope.wrap(event, producer="bench", correlation_id="bench")
        )[0]
        assert isinstance(built, EnvBuilt)
        path = unpack_dir(ctx.store.get_bytes(built.package_key), dest / template_id)
        tasks.append(BenchTask(f"{TEMPLATE_KIND}/{template_id}", TEMPLATE_KIND, None, path))
    return tasks


PeerCheck = Callable[[TaskDir, TaskRunner, Path], tuple[bool, str | None, list[str]]]


def oracle_only(task: TaskDir, runner: TaskRunner, workdir: Path) -> tuple[bool, str | None, list[str]]:
    workspace = runner.fresh_workspace(task, workdir)
    solved = runner.run_solution(task, workspace)
    if not solved.ok:
        return False, None, [f"reference solution failed ({solved.outcome.value})"]
    outcome = runner.verify(task, workspace)
    return outcome.passed, None, [] if outcome.passed else [f"reference solution rejected ({outcome.failure_type})"]


def validity_only(task: TaskDir, runner: TaskRunner, workdir: Path) -> tuple[bool, str | None, list[str]]:
    gate = run_validity(task, runner, workdir)[0]
    return gate.passed, gate.failure_type, gate.reasons


SIMPLE_PEERS: dict[str, PeerCheck] = {"oracle-only": oracle_only, "validity": validity_only}


def run_peer(peer: str, tasks: list[BenchTask], scratch: Path, settings: ReviewerSettings) -> dict[str, Verdict]:
    runner = TaskRunner(make_sandbox(settings))
    verdicts = {}
    for task in tasks:
        started = time.perf_counter()
        failure: str | None
        gate_seconds: dict[str, float] = {}
        if peer == "skillgym":
            report = review_task(task.path, settings)
            approved, failure, reasons = report.approved, report.failure_type, report.reasons
            gate_seconds = {gate.gate: gate.seconds for gate in report.gates if gate.seconds is not None}
        else:
            workdir = Path(tempfile.mkdtemp(prefix=f"{peer}-", dir=scratch))
            try:
                approved, failure, reasons = SIMPLE_PEERS[peer](TaskDir(task.path), runner, workdir)
            finally:
                remove_tree(workdir)
        verdicts[task.name] = Verdict(approved, failure, reasons, time.perf_counter() - started, gate_seconds)
    return verdicts


def ordered_kinds(tasks: list[BenchTask]) -> list[str]:
    order = [*KINDS, TEMPLATE_KIND]
    return sorted({t.kind for t in tasks}, key=order.index)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def timing(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "p90": round(percentile(values, 0.9), 3),
        "max": round(max(values), 3),
    }


def kind_summary(tasks: list[BenchTask], verdicts: dict[str, Verdict]) -> dict[str, Any]:
    row: dict[str, Any] = {"tasks": len(tasks), "expected_failure": tasks[0].expected_failure}
    if tasks[0].good:
        row["wrongly_rejected"] = [t.name for t in tasks if not verdicts[t.name].approved]
    else:
        caught = [t for t in tasks if not verdicts[t.name].approved]
        row["caught"] = len(caught)
        row["caught_as_expected"] = sum(verdicts[t.name].failure_type == t.expected_failure for t in caught)
        row["missed"] = [t.name for t in tasks if verdicts[t.name].approved]
        row["caught_as_other_type"] = {
            t.name: verdicts[t.name].failure_type for t in caught if verdicts[t.name].failure_type != t.expected_failure
        }
    row["seconds_per_review"] = timing([verdicts[t.name].seconds for t in tasks])
    return row


def gate_timing(verdicts: dict[str, Verdict]) -> dict[str, dict[str, float]]:
    """Seconds each gate took, over the reviews that ran it."""
    per_gate: dict[str, list[float]] = {}
    for verdict in verdicts.values():
        for gate, seconds in verdict.gate_seconds.items():
            per_gate.setdefault(gate, []).append(seconds)
    return {gate: {"reviews": len(values), **timing(values)} for gate, values in per_gate.items()}


def peer_summary(tasks: list[BenchTask], verdicts: dict[str, Verdict]) -> dict[str, Any]:
    defects = [t for t in tasks if not t.good]
    good = [t for t in tasks if t.good]
    summary: dict[str, Any] = {
        "defects_caught": sum(not verdicts[t.name].approved for t in defects),
        "defects_caught_as_expected": sum(
            not verdicts[t.name].approved and verdicts[t.name].failure_type == t.expected_failure for t in defects
        ),
        "defects_total": len(defects),
        "good_rejected": sum(not verdicts[t.name].approved for t in good),
        "good_total": len(good),
        "seconds_per_review": timing([v.seconds for v in verdicts.values()]),
        "by_kind": {
            kind: kind_summary([t for t in tasks if t.kind == kind], verdicts) for kind in ordered_kinds(tasks)
        },
        "verdicts": {
            name: {
                "approved": v.approved,
                "failure_type": v.failure_type,
                "seconds": round(v.seconds, 3),
                "reasons": [reason[:REASON_CHARS] for reason in v.reasons[:MAX_REASONS]],
            }
            for name, v in verdicts.items()
        },
    }
    if any(v.gate_seconds for v in verdicts.values()):
        summary["seconds_per_gate"] = gate_timing(verdicts)
    return summary


def table(result: dict[str, Any]) -> str:
    """Per kind and peer: defects caught (in brackets: with the expected failure type), or sound tasks rejected."""
    peers = list(result["peers"])
    lines = [f"{'kind':22s} {'tasks':>5s}  " + "  ".join(f"{peer:>16s}" for peer in peers)]
    for kind, info in result["kinds"].items():
        cells = []
        for peer in peers:
            row = result["peers"][peer]["by_kind"][kind]
            if info["expected_failure"] is None:
                cells.append(f"{len(row['wrongly_rejected'])} rejected")
            else:
                cells.append(f"{row['caught']} ({row['caught_as_expected']})")
        lines.append(f"{kind:22s} {info['tasks']:5d}  " + "  ".join(f"{cell:>16s}" for cell in cells))
    lines.append("seconds/review median p90: " + "; ".join(
        f"{peer} {row['seconds_per_review']['median']} {row['seconds_per_review']['p90']}"
        for peer, row in result["peers"].items()
    ))  # fmt: skip
    return "\n".join(lines)


def main(kinds: set[str] | None = None, peers: tuple[str, ...] = PEERS) -> dict[str, Any]:
    settings = ReviewerSettings()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="review-bench-") as tmp:
        root = Path(tmp)
        tasks = library_tasks(root / "library", kinds)
        if kinds is None or TEMPLATE_KIND in kinds:
            tasks += template_tasks(root / "builder", root / "templates")
        scratch = root / "scratch"
        scratch.mkdir()
        results = {peer: peer_summary(tasks, run_peer(peer, tasks, scratch, settings)) for peer in peers}
    result = {
        "benchmark": "review_bench",
        "selection": {"kinds": sorted(kinds) if kinds else "all", "peers": list(peers)},
        "machine": {"cpus": os.cpu_count(), "load_avg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)]},
        "tasks": len(tasks),
        "kinds": {
            kind: {
                "tasks": sum(t.kind == kind for t in tasks),
                "expected_failure": next(t.expected_failure for t in tasks if t.kind == kind),
            }
            for kind in ordered_kinds(tasks)
        },
        "peers": results,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", help=f"comma-separated kinds ({', '.join([*KINDS, TEMPLATE_KIND])})")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated peers")
    args = parser.parse_args()
    out = main(set(args.kinds.split(",")) if args.kinds else None, tuple(args.peers.split(",")))
    print(table(out))
    for peer, row in out["peers"].items():
        print(
            f"{peer:12s} caught {row['defects_caught']}/{row['defects_total']} "
            f"({row['defects_caught_as_expected']} as the expected type)  good rejected "
            f"{row['good_rejected']}/{row['good_total']}"
        )
