"""Task families: what one task of each family costs, and what the embedded pipeline sustains.

Per family (built for its own example skill, medium difficulty):

- ``build_s``: generating the instance, rendering its inputs in the sandbox and writing the task;
- ``env_cold_s`` / ``env_cached_s``: preparing the task's environment in an empty cache (pip's own
  download cache may be warm: the packages come from the local index) and again from the cache;
- ``dependence_s``: the reference solution run with and without the skill;
- ``validate_s``: the validator's full check (untouched workspace fails, reference and
  alternatives pass), and its verdict.

Then the embedded pipeline (no training) over a corpus of real skills, against a peer run of the
same pipeline on the same skills with the text templates named in the build plan: tasks per
hour for each, and per skill whether it got a validated task and how that task's reference
solution uses the skill (``skill_usage``: its script, its main library, its facts, none).

Run: ``python -m benchmarks.family_bench [--corpus DIR] [--families a,b]`` (writes
benchmarks/results/family_bench.json); ``--pipeline-only --env-cache DIR`` reruns only the two
pipelines (with a warm cache: the rate sustained once each family's environment exists);
``--coverage-only`` builds and validates the corpus's accepted skills (family_coverage.json)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in ("shared", ".", "services/builder", "services/validator", "services/ingest", "services/reviewer",
              "services/sampler", "services/trainer"):
    if str(ROOT / extra) not in sys.path:
        sys.path.insert(0, str(ROOT / extra))

from skillgym_builder.families import knobs as knob_rules  # noqa: E402
from skillgym_builder.families import registry  # noqa: E402
from skillgym_builder.families.base import Family  # noqa: E402
from skillgym_builder.families.script_cli import not_a_tool  # noqa: E402
from skillgym_builder.families.seeds import seed_card  # noqa: E402
from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan  # noqa: E402
from skillgym_builder.package import BuildInfo  # noqa: E402
from skillgym_core.contracts.task import TaskDir  # noqa: E402
from skillgym_core.envbuild import LocalVenvProvider, declared_requirements  # noqa: E402
from skillgym_core.sandbox.local import LocalSandbox  # noqa: E402
from skillgym_validator.settings import ValidatorSettings  # noqa: E402
from skillgym_validator.validation import validate_task_dirs  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "family_bench.json"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "skills"
TEXT_TEMPLATES = "section-trace,procedure-dag,guidance-selection,index-repair"


def _timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = call()
    return round(time.perf_counter() - started, 3), value


def bench_family(family: Family, work: Path) -> dict[str, Any]:
    import random

    sandbox = LocalSandbox()
    card = seed_card(family.spec)
    fit = family.suitability(card)
    knobs = knob_rules.preset(family.spec, "medium", random.Random(0))
    cold = LocalVenvProvider(work / "env-cold")
    builds = []
    task: TaskDir | None = None
    for seed in range(3):
        materialiser = FamilyMaterialiser(sandbox, cold, work / f"scratch-{seed}", check_dependence=False)
        plan = FamilyPlan(seed=seed, knobs=knobs, fit=fit)

        def build(materialiser: FamilyMaterialiser = materialiser, plan: FamilyPlan = plan, seed: int = seed) -> TaskDir:
            output = materialiser.instance(family, card, plan)
            return materialiser.write(work / f"task-{seed}", card, family.spec, output, BuildInfo(builder="family"))[1]

        seconds, built = _timed(build)
        builds.append(seconds)
        task = task or built
    assert task is not None
    env_cold = env_cached = 0.0
    if declared_requirements(task) is not None:
        env_cold, _ = _timed(lambda: cold.prepare(task))
        env_cached, _ = _timed(lambda: cold.prepare(task))
    materialiser = FamilyMaterialiser(sandbox, cold, work / "scratch-dependence")
    output = materialiser.instance(family, card, FamilyPlan(seed=0, knobs=knobs, fit=fit))
    dependence_s, (_, checked) = _timed(
        lambda: materialiser.write(work / "task-dependence", card, family.spec, output, BuildInfo(builder="family")))
    dependence = (checked.config().metadata.model_extra or {}).get("skill_dependence") or {}
    settings = ValidatorSettings(env_cache=work / "env-cold")
    validate_s, records = _timed(lambda: validate_task_dirs([task.root], settings))
    record = records[0]
    return {
        "category": family.spec.category,
        "build_s": {"median": statistics.median(builds), "runs": builds},
        "env_cold_s": env_cold,
        "env_cached_s": env_cached,
        "dependence_s": dependence_s,
        "dependence_holds": dependence.get("holds"),
        "validate_s": validate_s,
        "valid": bool(record.get("valid")),
        "validation_failure": None if record.get("valid") else record.get("reasons") or record.get("error"),
    }


def _task_metadata(store: Any, task_id: str) -> dict[str, Any]:
    import io
    import tarfile
    import tomllib

    with tarfile.open(fileobj=io.BytesIO(store.get_bytes(f"tasks/{task_id}/package.tar.gz"))) as archive:
        member = next(m for m in archive.getmembers() if m.name.rsplit("/", 1)[-1] == "task.toml")
        handle = archive.extractfile(member)
        assert handle is not None
        return dict(tomllib.loads(handle.read().decode()).get("metadata", {}))


def _usage_by_skill(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Per skill: its ingest verdict, why it got no task, and per task its family, whether it was
    validated and how its reference solution uses the skill."""
    from skillgym_core.store.base import get_json
    from skillgym_core.store.local import LocalStore

    from skillgym.summary import read_build_reports

    store = LocalStore(out_dir / "store")
    skills: dict[str, dict[str, Any]] = {}
    for line in (out_dir / "ingest" / "skills.jsonl").read_text().splitlines():
        record = json.loads(line)
        skills[record["skill_id"]] = {"name": record["name"], "accepted": record["accepted"],
                                      "subcategory": record.get("subcategory"), "tasks": []}
    for report in read_build_reports(store):
        entry = skills.get(str(report.get("skill_id")))
        if entry is not None and report.get("outcome") == "skipped":
            entry["skipped"] = report.get("skip_reason") or report.get("reason")
    for key in store.list("tasks/"):
        if not key.endswith("/package.tar.gz"):
            continue
        task_id = key.split("/")[1]
        meta = _task_metadata(store, task_id)
        entry = skills.get(str(meta.get("skill_id")))
        if entry is None:
            continue
        try:
            valid = bool(get_json(store, f"tasks/{task_id}/validation.json").get("valid"))
        except Exception:  # not validated (rejected by review, or never reached the validator)
            valid = False
        entry["tasks"].append({"task_id": task_id, "family": meta.get("family") or meta.get("template"),
                               "validated": valid, "skill_usage": (meta.get("skill_usage") or {}).get("kind", "none")})
    return skills


def bench_pipeline(corpus: Path, work: Path, preferred: str | None, env_cache: Path | None = None,
                   instances: int = 1) -> dict[str, Any]:
    from skillgym.embedded import EmbeddedOptions, run_pipeline

    extra = {"SKILLGYM_ENV_CACHE": str(env_cache or work / "env"), "SKILLGYM_INSTANCES_PER_SKILL": str(instances)}
    if preferred:
        extra["SKILLGYM_PREFERRED_TEMPLATES"] = json.dumps(preferred.split(","))
    out_dir = work / ("text-templates" if preferred else "families")
    result = run_pipeline([corpus], out_dir, EmbeddedOptions(train=False, extra_env=extra))
    summary = result.summary
    hours = result.seconds / 3600
    return {"seconds": result.seconds, "tasks_validated": summary["tasks_validated"],
            "tasks_per_hour": round(summary["tasks_validated"] / hours, 1) if hours else 0.0,
            "summary": {k: summary.get(k) for k in ("skills_seen", "skills_accepted", "tasks_built", "tasks_approved",
                                                     "tasks_validated", "tasks_by_family", "skills_skipped_by_reason")},
            "out_dir": str(out_dir)}


def pipeline_report(corpus: Path, work: Path, env_cache: Path | None, instances: int = 1) -> dict[str, Any]:
    """The family pipeline (``instances`` tasks per skill) and its text-template peer (one per
    skill), one after the other on the same skills."""
    families = bench_pipeline(corpus, work, None, env_cache, instances)
    families["instances_per_skill"] = instances
    peer = bench_pipeline(corpus, work, TEXT_TEMPLATES, env_cache)
    ratio = round(families["tasks_per_hour"] / peer["tasks_per_hour"], 3) if peer["tasks_per_hour"] else None
    return {"corpus": str(corpus), "env_cache": "warm (given)" if env_cache else "cold", "families": families,
            "text_templates_peer": peer, "tasks_per_hour_ratio_families_to_peer": ratio,
            "coverage": coverage(_usage_by_skill(Path(families["out_dir"])))}


SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".mjs", ".ts")


def coverage(skills: dict[str, dict[str, Any]]) -> dict[str, Any]:
    accepted = [s for s in skills.values() if s["accepted"]]
    strict = [s for s in accepted
              if any(t["validated"] and t["skill_usage"] in ("script", "library", "tool") for t in s["tasks"])]
    with_facts = [s for s in accepted if any(t["validated"] and t["skill_usage"] != "none" for t in s["tasks"])]
    validated = [s for s in accepted if any(t["validated"] for t in s["tasks"])]
    scripted = [s for s in accepted if s.get("ships_script")]
    scripted_strict = [s for s in strict if s.get("ships_script")]

    def share(group: list[dict[str, Any]]) -> float:
        return round(len(group) / len(accepted), 3) if accepted else 0.0

    return {"accepted": len(accepted), "with_validated_task": len(validated),
            "validated_using_script_or_library": len(strict), "share_script_or_library": share(strict),
            "accepted_shipping_scripts": len(scripted), "scripted_validated_using_script_or_library": len(scripted_strict),
            "share_of_scripted": round(len(scripted_strict) / len(scripted), 3) if scripted else None,
            "validated_using_script_library_or_facts": len(with_facts), "share_with_facts": share(with_facts),
            "skills": {s["name"]: {k: s.get(k) for k in ("accepted", "subcategory", "ships_script", "skipped", "tasks")}
                       for s in skills.values()}}


def corpus_coverage(corpus: Path, work: Path, env_cache: Path, *, validate: bool = True) -> dict[str, Any]:
    """Without the reviewer and the sampler: ingest the corpus, build every accepted skill with
    the builder service, validate each task (unless ``validate`` is off), and read how its
    reference solution uses the skill."""
    from skillgym_builder import BuilderService, BuilderSettings
    from skillgym_core.context import ServiceContext
    from skillgym_core.contracts.events import EnvBuilt, Envelope
    from skillgym_core.store.local import LocalStore
    from skillgym_ingest.pipeline import ingest

    from skillgym.task_variety import instruction_variety

    store = LocalStore(work / "store")
    ctx = ServiceContext(store=store, sandbox=LocalSandbox(), scratch=work / "scratch")
    builder = BuilderService(ctx, BuilderSettings(env_cache=env_cache))
    result = ingest([corpus], store=store)
    skills: dict[str, dict[str, Any]] = {}
    # a copy of a skill (the same id) that dedup refused must not hide the accepted original
    for record in sorted(result.records, key=lambda r: r.accepted):
        skills[record.skill_id] = {"name": record.name, "accepted": record.accepted,
                                   "subcategory": record.subcategory, "tasks": [],
                                   "ships_script": any(f.path.endswith(SCRIPT_SUFFIXES) and not not_a_tool(PurePosixPath(f.path))
                                                       for f in record.files)}
    envelopes: list[Envelope] = []
    for payload in result.events:
        started = time.perf_counter()
        built = builder.handle(Envelope.wrap(payload, producer="bench", correlation_id="coverage"))
        envelopes += [Envelope.wrap(event, producer="bench", correlation_id="coverage") for event in built]
        entry = skills[payload.skill_id]
        entry["build_s"] = round(time.perf_counter() - started, 2)
        events = [event for event in built if isinstance(event, EnvBuilt)]
        if not events:
            report = json.loads(store.get_bytes(f"skills/{payload.skill_id}/build.json"))
            entry["skipped"] = report.get("skip_reason")
        for event in events:
            with ctx.task_checkout(event.package_key) as task:
                meta = task.config().metadata
                started = time.perf_counter()
                record = validate_task_dirs([task.root], ValidatorSettings(env_cache=env_cache))[0] if validate else {}
                entry["tasks"].append({
                    "family": event.template, "validated": bool(record.get("valid")) if validate else None,
                    "validate_s": round(time.perf_counter() - started, 2),
                    "skill_usage": ((meta.model_extra or {}).get("skill_usage") or {}).get("kind", "none"),
                    "dependence_holds": ((meta.model_extra or {}).get("skill_dependence") or {}).get("holds"),
                })
        print(json.dumps({entry["name"]: entry}), flush=True)
    # tasks for skills with different tools of their own that say the same thing
    return {**coverage(skills), "instruction_variety": instruction_variety(store, envelopes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS if DEFAULT_CORPUS.is_dir() else ROOT / "examples")
    parser.add_argument("--families", help="comma-separated family ids (default: all)")
    parser.add_argument("--skip-pipeline", action="store_true")
    parser.add_argument("--coverage-only", action="store_true",
                        help="only build and validate the corpus's accepted skills (no reviewer, no sampler)")
    parser.add_argument("--pipeline-only", action="store_true",
                        help="only the embedded pipeline runs (families and the text-template peer), kept next to the "
                             "per-family results already in the results file")
    parser.add_argument("--out", type=Path, help="with --coverage-only: the results file (default: family_coverage.json)")
    parser.add_argument("--env-cache", type=Path,
                        help="reuse this environment cache (--coverage-only, --pipeline-only: a warm cache measures "
                             "the rate the pipeline sustains once each family's environment exists)")
    parser.add_argument("--instances", type=int, default=1, help="family tasks per skill in the pipeline runs")
    parser.add_argument("--results", type=Path, default=RESULTS, help="with --pipeline-only: the results file")
    args = parser.parse_args()
    if args.coverage_only:
        with tempfile.TemporaryDirectory(prefix="family-coverage-") as tmp:
            cache = args.env_cache or Path(tmp) / "env"
            report = {"corpus": str(args.corpus), "coverage": corpus_coverage(args.corpus, Path(tmp), cache)}
        out = args.out or RESULTS.with_name("family_coverage.json")
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
        print(json.dumps({k: v for k, v in report["coverage"].items() if k != "skills"}, indent=2, default=str))
        return
    if args.pipeline_only:
        previous = json.loads(args.results.read_text()) if args.results.is_file() else {"families": {}}
        with tempfile.TemporaryDirectory(prefix="family-pipeline-") as tmp:
            previous["pipeline"] = pipeline_report(args.corpus, Path(tmp), args.env_cache, args.instances)
        args.results.write_text(json.dumps(previous, indent=2, default=str) + "\n")
        print(json.dumps(previous["pipeline"], indent=2, default=str))
        return
    wanted = args.families.split(",") if args.families else registry().ids()
    result: dict[str, Any] = {"machine": f"{os.cpu_count()} cores, shared with other work", "families": {}}
    if args.families and RESULTS.is_file():  # measuring some families keeps the others' results
        result = {**json.loads(RESULTS.read_text()), **{k: v for k, v in result.items() if k != "families"}}
    with tempfile.TemporaryDirectory(prefix="family-bench-") as tmp:
        for family_id in wanted:
            print(f"== {family_id}", flush=True)
            result["families"][family_id] = bench_family(registry().get(family_id), Path(tmp) / family_id)
            print(json.dumps(result["families"][family_id]), flush=True)
        if not args.skip_pipeline:
            result["pipeline"] = pipeline_report(args.corpus, Path(tmp), args.env_cache, args.instances)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "families"}, indent=2, default=str))


if __name__ == "__main__":
    main()
