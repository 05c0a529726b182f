"""Every check of every family's verifier weakened, one at a time, on tasks built for real skills:
does the reviewer refuse each weakened verifier as too lax?

Skills: the developers' corpus and real skill packages fetched from the package index
(``skillforge-agent`` by default); each family's seed skill with ``--seeds`` (the exhaustive
weakening test, ``tests/reviewer/test_weakened_family_verifiers.py``, covers those). Ingest classifies them, the family registry
chooses a family for each, and up to ``--per-family`` skills of each family are built with the
builder service (a skill the family's task would not use is refused by the builder, and the next
one is tried). Each built task is reviewed unweakened first (a task the reviewer already
refuses says nothing about weakening). Then, for every rubric item and every check inside a
composite item that the task scores, a copy of the task whose rubric runner lets that one check
pass whatever it is given is reviewed with 12 mutants and no solution reruns (no reviewer model);
the unweakened task gets the default review.

A weakening of a check the instance never scores (its item is not in this instance's rubric)
changes nothing and is not counted. Every other weakening is counted: refused as ``too_lax``
(caught), refused for another reason (reported apart) or approved (missed).

    python -m benchmarks.weaken_bench [--corpus DIR] [--packages a,b] [--per-family N] [--families a,b] [--seeds]

Writes ``benchmarks/results/weaken_bench.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", "services/ingest", "services/builder", "services/reviewer", "."):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_builder import BuilderService, BuilderSettings  # noqa: E402
from skillgym_builder.families.registry import registry  # noqa: E402
from skillgym_builder.families.seeds import seed_skill_dir  # noqa: E402
from skillgym_builder.skillcard import card_from_folder  # noqa: E402
from skillgym_core import keys  # noqa: E402
from skillgym_core.context import ServiceContext  # noqa: E402
from skillgym_core.contracts.events import EnvBuilt, Envelope  # noqa: E402
from skillgym_core.sandbox.local import LocalSandbox  # noqa: E402
from skillgym_core.sandbox.workspace import safe_copy_tree  # noqa: E402
from skillgym_core.store.base import get_json  # noqa: E402
from skillgym_core.store.local import LocalStore  # noqa: E402
from skillgym_ingest.pipeline import ingest  # noqa: E402
from skillgym_reviewer import ReviewerSettings, review_task_dir  # noqa: E402

from benchmarks.script_reach import fetch, unpack  # noqa: E402
from tests.reviewer.weaken import rubric_items, weaken_runner  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "weaken_bench.json"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "skills"
PACKAGES = ("skillforge-agent",)
CANDIDATES = 3  # skills tried per task wanted of a family
# reviewed last: their reviews train a network or render pages in every verifier run
SLOW_FAMILIES = ("image-compose", "model-training")
COPY_LIMITS = {"max_bytes": 256 * 1024 * 1024, "max_files": 20_000}


def candidate_roots(corpus: Path, packages: list[str], work: Path, *, seeds: bool) -> list[tuple[str, Path]]:
    """(source, folder holding skills): the seed skills (if asked), the corpus, each package unpacked."""
    roots: list[tuple[str, Path]] = []
    if seeds:
        folder = work / "seeds"
        for family_id in registry().ids():
            safe_copy_tree(seed_skill_dir(family_id), folder / f"{family_id}-seed", **COPY_LIMITS)
        roots.append(("seeds", folder))
    if corpus.is_dir():
        roots.append(("corpus", corpus))
    for package in packages:
        where = work / "packages" / package
        where.mkdir(parents=True)
        for wheel in fetch(package, where):
            unpack(wheel, where / "unpacked")
        roots.append((package, where / "unpacked"))
    return roots


def chosen_skills(roots: list[tuple[str, Path]], store: LocalStore, per_family: int,
                  families: set[str] | None) -> list[tuple[str, str, str, Any]]:
    """(family, source, skill name, ingested event) for up to ``per_family`` accepted skills of each family,
    in the order of ``roots`` and then of skill name."""
    picked: dict[str, list[tuple[str, str, str, Any]]] = collections.defaultdict(list)
    seen_hashes: set[str] = set()
    for source, root in roots:
        result = ingest([root], store=store)
        records = {record.skill_id: record for record in result.records}
        events = sorted(result.events, key=lambda event: records[event.skill_id].name)
        for event in events:
            record = records[event.skill_id]
            if record.content_hash in seen_hashes:
                continue
            seen_hashes.add(record.content_hash)
            choice = registry().choose(card_from_folder(record, Path(record.source)))
            if choice.family is None:
                continue
            family_id = choice.family.spec.id
            # more candidates than wanted: a family refuses a skill its task would not use
            if (families is None or family_id in families) and len(picked[family_id]) < per_family * CANDIDATES:
                picked[family_id].append((family_id, source, record.name, event))
    order = sorted(picked, key=lambda family_id: (family_id in SLOW_FAMILIES, family_id))
    return [entry for family_id in order for entry in picked[family_id]]


def review(task_root: Path, settings: ReviewerSettings) -> dict[str, Any]:
    started = time.perf_counter()
    report = review_task_dir(task_root, settings)
    gates = {gate.gate: gate for gate in report.gates}
    mutation = gates.get("mutation")
    return {"passed": report.passed, "failure_type": report.failure_type, "reasons": report.reasons[:3],
            "unkilled": (mutation.details or {}).get("unkilled_items", []) if mutation else [],
            "scored": list((mutation.details or {}).get("items", {})) if mutation else [],
            "seconds": round(time.perf_counter() - started, 2)}


def weaken_one_task(task_root: Path, work: Path, settings: ReviewerSettings, weakened_settings: ReviewerSettings
                    ) -> dict[str, Any]:
    """The task reviewed as built (``settings``), then once per check it scores with that check
    weakened (``weakened_settings``)."""
    baseline = review(task_root, settings)
    # what the reference run scored: rubric items and the checks inside composite items, however
    # the verifier builds their lists
    targets = baseline.pop("scored")
    entry: dict[str, Any] = {"baseline": baseline, "targets": {}, "rubric": rubric_items(task_root)}
    if not baseline["passed"]:
        return entry
    for target in targets:
        copy = work / f"weakened-{target.replace(':', '-')}"
        shutil.rmtree(copy, ignore_errors=True)
        safe_copy_tree(task_root, copy, **COPY_LIMITS)
        weaken_runner(copy, target)
        verdict = review(copy, weakened_settings)
        verdict.pop("scored")
        verdict["outcome"] = ("approved" if verdict["passed"] else
                              "too_lax" if verdict["failure_type"] == "too_lax" else "refused_otherwise")
        verdict["named"] = target in verdict["unkilled"]
        entry["targets"][target] = verdict
        shutil.rmtree(copy, ignore_errors=True)
        print(json.dumps({"target": target, **{k: verdict[k] for k in ("outcome", "named", "seconds")}}), flush=True)
    return entry


def summarise(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    outcomes: collections.Counter[str] = collections.Counter()
    per_family: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    missed, refused, seconds = [], [], []
    for task in tasks:
        if not task["built"]:
            per_family[task["family"]]["not_built"] += 1
            continue
        if not task["baseline"]["passed"]:
            per_family[task["family"]]["task_refused_unweakened"] += 1
            refused.append(f"{task['family']} / {task['skill']}: {'; '.join(task['baseline']['reasons'])[:300]}")
            continue
        per_family[task["family"]]["tasks"] += 1
        for target, verdict in task["targets"].items():
            outcomes[verdict["outcome"]] += 1
            per_family[task["family"]][verdict["outcome"]] += 1
            seconds.append(verdict["seconds"])
            if verdict["outcome"] == "approved":
                missed.append(f"{task['family']} / {task['skill']}: {target}")
    counted = sum(outcomes.values())
    return {"weakened": counted, "too_lax": outcomes["too_lax"], "refused_otherwise": outcomes["refused_otherwise"],
            "approved": outcomes["approved"], "share_refused_too_lax": round(outcomes["too_lax"] / counted, 3) if counted else None,
            "tasks_per_family": {family: sum(1 for t in tasks if t["family"] == family and t["built"])
                                 for family in sorted(per_family)},
            "per_family": {family: dict(counts) for family, counts in sorted(per_family.items())},
            "missed": missed, "refused_unweakened": refused, "median_review_s": statistics.median(seconds) if seconds else None}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--per-family", type=int, default=2, help="real skills built per family (default 2)")
    parser.add_argument("--seeds", action="store_true",
                        help="also the families' seed skills (the exhaustive weakening test covers them)")
    parser.add_argument("--families", help="comma-separated family ids (default: all)")
    parser.add_argument("--env-cache", type=Path, help="environment cache to reuse (default: a fresh one)")
    args = parser.parse_args()
    families = set(args.families.split(",")) if args.families else None
    tasks: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="weaken-bench-") as tmp:
        work = Path(tmp)
        env_cache = args.env_cache or work / "env-cache"
        ctx = ServiceContext(store=LocalStore(work / "store"), sandbox=LocalSandbox(), scratch=work / "scratch")
        builder = BuilderService(ctx, BuilderSettings(env_cache=env_cache, family_difficulty="medium",
                                                      check_skill_dependence=False))
        settings = ReviewerSettings(mutation_llm_solutions=0, env_cache=env_cache)
        # a check that accepts anything fails no mutant, so a few mutants expose it; fewer
        # chances make the count stricter, not looser
        weakened_settings = ReviewerSettings(mutation_llm_solutions=0, env_cache=env_cache, mutation_max_mutants=12,
                                             mutation_skip_steps=False, mutation_stale_inputs=0, stability_reruns=0)
        built_per_family: collections.Counter[str] = collections.Counter()
        roots = candidate_roots(args.corpus, list(filter(None, args.packages.split(","))), work, seeds=args.seeds)
        for family_id, source, name, event in chosen_skills(roots, ctx.store, args.per_family, families):
            if built_per_family[family_id] >= args.per_family:
                continue
            # the builder refuses a family the same exercise for a second skill (variety); here
            # each skill's task is wanted on its own, so the family's memory is cleared first
            for key in list(ctx.store.list(keys.family_instructions(family_id))):
                ctx.store.delete(key)
            built = [e for e in builder.handle(Envelope.wrap(event, producer="bench", correlation_id="weaken"))
                     if isinstance(e, EnvBuilt) and e.template == family_id]
            if not built:
                why = get_json(ctx.store, f"skills/{event.skill_id}/build.json").get("skip_reason")
                tasks.append({"family": family_id, "skill": name, "source": source, "built": False,
                              "baseline": {"passed": False, "failure_type": f"not_built: {why}"}, "targets": {}})
                continue
            task_root = work / "task"
            shutil.rmtree(task_root, ignore_errors=True)
            with ctx.task_checkout(built[0].package_key) as task:
                safe_copy_tree(task.root, task_root, **COPY_LIMITS)
            print(json.dumps({"family": family_id, "skill": name, "source": source}), flush=True)
            built_per_family[family_id] += 1
            entry = weaken_one_task(task_root, work, settings, weakened_settings)
            tasks.append({"family": family_id, "skill": name, "source": source, "built": True, **entry})
            RESULTS.write_text(json.dumps({"summary": summarise(tasks), "tasks": tasks}, indent=2) + "\n")
    report = {"summary": summarise(tasks), "tasks": tasks}
    print(json.dumps(report["summary"], indent=2))
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
