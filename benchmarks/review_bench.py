"""Review quality and cost: the full SkillGym reviewer against two weaker peers run on the same
tasks on this machine.

- ``oracle-only``: what an oracle run checks (the reference solution earns reward 1);
- ``validity``: adds ``v(x0) = 0`` by execution (the untouched workspace must fail);
- ``skillgym``: the full reviewer (conformance, validity, leakage, too-lax / too-strict /
  anti-tamper probes).

Tasks: the hand-made library (one good task and ten broken in known ways) plus one task per
builder template. Reports defects caught, good tasks wrongly rejected, and seconds per review.
Run: ``python -m benchmarks.review_bench`` (writes benchmarks/results/review_bench.json)."""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/builder", "services/reviewer", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_builder import BuilderService, BuilderSettings  # noqa: E402
from skillgym_builder.templates import registry  # noqa: E402
from skillgym_core.contracts.events import EnvBuilt, Envelope  # noqa: E402
from skillgym_core.contracts.task import TaskDir  # noqa: E402
from skillgym_core.taskrun import TaskRunner  # noqa: E402
from skillgym_reviewer import ReviewerService, ReviewerSettings  # noqa: E402
from skillgym_reviewer.gates.validity import run_validity  # noqa: E402

from tests.builder.skills import FIXTURES, make_context, put_skill  # noqa: E402
from tests.reviewer import handmade  # noqa: E402
from tests.reviewer.test_broken_tasks import CASES  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "review_bench.json"


def oracle_only(task: TaskDir, runner: TaskRunner, workdir: Path) -> bool:
    workspace = runner.fresh_workspace(task, workdir)
    return runner.run_solution(task, workspace).ok and runner.verify(task, workspace).passed


def validity_only(task: TaskDir, runner: TaskRunner, workdir: Path) -> bool:
    return run_validity(task, runner, workdir)[0].passed


def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="review-bench-") as tmp:
        root = Path(tmp)
        ctx = make_context(root)
        tasks: list[tuple[str, bool, str, Any]] = []  # name, is_good, task_id, package key
        for name, edit, protect, failure, _ in CASES:
            task = handmade.write_task(root / "handmade" / name, edit, protect=protect)
            tasks.append((f"handmade:{name}", failure is None, f"task-{name}", ctx.save_task(f"task-{name}", task)))
        event = put_skill(ctx.store, FIXTURES / "csv-cleanup")
        for template_id in registry().ids():
            built = BuilderService(ctx, BuilderSettings(preferred_templates=[template_id])).handle(
                Envelope.wrap(event, producer="bench", correlation_id="bench"))[0]
            assert isinstance(built, EnvBuilt)
            tasks.append((f"template:{template_id}", True, built.task_id, built.package_key))

        runner = TaskRunner(ctx.sandbox)
        reviewer = ReviewerService(ctx, ReviewerSettings(feedback_budget=0))
        peers: dict[str, dict[str, Any]] = {}
        for peer in ("oracle-only", "validity", "skillgym"):
            caught, false_rejects, seconds, verdicts = 0, 0, [], {}
            for name, good, task_id, key in tasks:
                started = time.perf_counter()
                if peer == "skillgym":
                    event_built = EnvBuilt(task_id=task_id, skill_id="bench", package_key=key, template="bench")
                    reviewed = reviewer.handle(Envelope.wrap(event_built, producer="bench", correlation_id="bench"))[0]
                    approved = bool(getattr(reviewed, "approved", False))
                else:
                    with ctx.task_checkout(key) as task:
                        check = oracle_only if peer == "oracle-only" else validity_only
                        approved = check(task, runner, Path(tempfile.mkdtemp(dir=root)))
                seconds.append(time.perf_counter() - started)
                verdicts[name] = "approved" if approved else "rejected"
                caught += (not good) and (not approved)
                false_rejects += good and (not approved)
            defects = sum(1 for _, good, _, _ in tasks if not good)
            peers[peer] = {
                "defects_caught": caught,
                "defects_total": defects,
                "good_rejected": false_rejects,
                "good_total": len(tasks) - defects,
                "seconds_per_review_median": round(statistics.median(seconds), 3),
                "seconds_per_review_max": round(max(seconds), 3),
                "verdicts": verdicts,
            }
    result = {"benchmark": "review_bench", "tasks": len(tasks), "peers": peers}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    out = main()
    for peer, row in out["peers"].items():
        print(f"{peer:12s} caught {row['defects_caught']}/{row['defects_total']}  good rejected "
              f"{row['good_rejected']}/{row['good_total']}  median {row['seconds_per_review_median']} s/review")
