"""Where a review's time goes, and what judging wrong outputs in bulk saves: each family's example
task (medium knobs, seed 0) reviewed twice on this machine, with bulk judging and with one
verifier run per wrong output (the peer), counting the sandbox runs of each kind and their
summed wall time. The verdicts of the two reviews must agree.

Run: ``python -m benchmarks.review_profile [--families a,b] [--env-cache DIR]`` (writes
benchmarks/results/review_profile.json)."""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", ".", "services/builder", "services/reviewer"):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_builder.families import knobs as knob_rules  # noqa: E402
from skillgym_builder.families import registry  # noqa: E402
from skillgym_builder.families.seeds import seed_card  # noqa: E402
from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan  # noqa: E402
from skillgym_builder.package import BuildInfo  # noqa: E402
from skillgym_core.envbuild import LocalVenvProvider  # noqa: E402
from skillgym_core.sandbox.local import LocalSandbox  # noqa: E402
from skillgym_reviewer import ReviewerSettings, review_task_dir  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "review_profile.json"
KINDS = (("bash /tests/test.sh", "verifier run (one workspace)"), ("python3 /opt/skillgym-bulk/", "verifier run (bulk)"),
         ("bash /solution/alternatives/", "alternative solution"), ("bash /solution/", "reference solution (or a variant)"))


class RunLedger:
    """Sandbox runs by kind: count and summed wall seconds (runs overlap, so sums exceed the review)."""

    def __init__(self) -> None:
        self.runs: dict[str, list[float]] = collections.defaultdict(list)
        self.lock = threading.Lock()
        self.original = LocalSandbox.run

    def __enter__(self) -> RunLedger:
        ledger = self

        def run(sandbox: LocalSandbox, command: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return ledger.original(sandbox, command, **kwargs)
            finally:
                line = " ".join(command)
                kind = next((name for prefix, name in KINDS if line.startswith(prefix)), "other")
                with ledger.lock:
                    ledger.runs[kind].append(time.perf_counter() - started)

        LocalSandbox.run = run  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        LocalSandbox.run = self.original  # type: ignore[method-assign]

    def summary(self) -> dict[str, Any]:
        return {kind: {"runs": len(times), "wall_s": round(sum(times), 2)} for kind, times in sorted(self.runs.items())}


def profile_family(family_id: str, work: Path, env_cache: Path) -> dict[str, Any]:
    family = registry().get(family_id)
    card = seed_card(family.spec)
    knobs = knob_rules.preset(family.spec, "medium", random.Random(0))
    materialiser = FamilyMaterialiser(LocalSandbox(), LocalVenvProvider(env_cache), work / "scratch", check_dependence=False)
    output = materialiser.instance(family, card, FamilyPlan(seed=0, knobs=knobs, fit=family.suitability(card)))
    task = materialiser.write(work / "task", card, family.spec, output, BuildInfo(builder="family"))[1]
    result: dict[str, Any] = {}
    for label, bulk in (("bulk", True), ("one_run_each", False)):
        settings = ReviewerSettings(mutation_llm_solutions=0, env_cache=env_cache, bulk_judging=bulk)
        with RunLedger() as ledger:
            started = time.perf_counter()
            report = review_task_dir(task.root, settings)
            seconds = time.perf_counter() - started
        result[label] = {"review_s": round(seconds, 2), "approved": report.passed, "failure_type": report.failure_type,
                         "gates": {g.gate: g.passed for g in report.gates}, "sandbox_runs": ledger.summary()}
    result["same_verdicts"] = all(result["bulk"][k] == result["one_run_each"][k] for k in ("approved", "failure_type", "gates"))
    result["speedup"] = round(result["one_run_each"]["review_s"] / result["bulk"]["review_s"], 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", help="comma-separated family ids (default: all)")
    parser.add_argument("--env-cache", type=Path, help="task environments (default: a fresh cache)")
    args = parser.parse_args()
    wanted = args.families.split(",") if args.families else registry().ids()
    families: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="review-profile-") as tmp:
        cache = args.env_cache or Path(tmp) / "env"
        for family_id in wanted:
            families[family_id] = profile_family(family_id, Path(tmp) / family_id, cache)
            print(family_id, json.dumps({k: v for k, v in families[family_id].items() if k in ("speedup", "same_verdicts")}),
                  flush=True)
    totals = {label: round(sum(f[label]["review_s"] for f in families.values()), 2) for label in ("bulk", "one_run_each")}
    verifier_runs = {label: sum(run["runs"] for f in families.values() for kind, run in f[label]["sandbox_runs"].items()
                                if kind.startswith("verifier run")) for label in ("bulk", "one_run_each")}
    result = {"benchmark": "review_profile", "machine": f"{os.cpu_count()} cores", "families": families,
              "review_s_total": totals, "verifier_sandbox_runs_total": verifier_runs,
              "ratio_one_run_each_to_bulk": round(totals["one_run_each"] / totals["bulk"], 2) if totals["bulk"] else None,
              "all_verdicts_same": all(f["same_verdicts"] for f in families.values())}
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "families"}, indent=2))


if __name__ == "__main__":
    main()
