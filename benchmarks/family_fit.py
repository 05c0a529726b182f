"""Which family the suitability gate gives real skills, and why it gives none: the developers'
corpus and real skill packages fetched from the package index go through ingest (classification
and needs) and the family registry's choice; nothing is built or run. Per source: skills
accepted, the family chosen per skill, the skills left without one by reason, and the skills a
family was refused because its tasks would use none of the libraries the skill is about
(``skill_library_elsewhere``).

    python -m benchmarks.family_fit [--corpus DIR] [--packages a,b] [--build]   (writes results/family_fit.json)

``--build`` also builds every accepted skill with the builder service (nothing is validated) and
counts, per source, the tasks per family by how their reference solution uses the skill, and the
skills skipped per reason (a family whose task would use nothing of the skill builds nothing).
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
from pathlib import Path
from typing import Any

from skillgym_builder.families.registry import registry
from skillgym_builder.skillcard import card_from_folder
from skillgym_core.store.local import LocalStore
from skillgym_ingest.pipeline import ingest

from benchmarks.script_reach import fetch, unpack

RESULTS = Path(__file__).parent / "results" / "family_fit.json"
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "skills"
PACKAGES = ("skillforge-agent",)


def choices(root: Path) -> dict[str, Any]:
    """The registry's choice for every skill ingest accepts below ``root``."""
    with tempfile.TemporaryDirectory(prefix="family-fit-") as work:
        result = ingest([root], store=LocalStore(Path(work) / "store"))
    families = registry()
    chosen: collections.Counter[str] = collections.Counter()
    skipped: collections.Counter[str] = collections.Counter()
    library_refusals: collections.Counter[str] = collections.Counter()
    per_skill = {}
    for record in result.records:
        folder = Path(record.source)
        if not record.accepted or not folder.is_dir():
            continue
        choice = families.choose(card_from_folder(record, folder))
        refused = sorted(fid for fid, fit in choice.fits.items() if fit.code == "skill_library_elsewhere")
        library_refusals.update(refused)
        if choice.family is None:
            skipped[choice.skip_reason] += 1
        else:
            chosen[choice.family.spec.id] += 1
        per_skill[record.name] = {"subcategory": record.subcategory,
                                  "family": choice.family.spec.id if choice.family else None,
                                  "skip_reason": None if choice.family else choice.skip_reason,
                                  "refused_for_library": refused}  # fmt: skip
    return {"accepted": len(per_skill), "with_family": sum(chosen.values()), "chosen": dict(chosen.most_common()),
            "skipped": dict(skipped.most_common()), "library_refusals": dict(library_refusals.most_common()),
            "skills": per_skill}  # fmt: skip


def built(root: Path) -> dict[str, Any]:
    """What the builder makes of every skill ingest accepts below ``root``."""
    from benchmarks.family_bench import corpus_coverage

    with tempfile.TemporaryDirectory(prefix="family-build-") as work:
        skills = corpus_coverage(root, Path(work), Path(work) / "env-cache", validate=False)["skills"]
    usage: collections.Counter[str] = collections.Counter()
    skipped: collections.Counter[str] = collections.Counter()
    for entry in skills.values():
        if not entry["accepted"]:
            continue
        for task in entry["tasks"]:
            usage[f"{task['family']}:{task['skill_usage']}"] += 1
        if not entry["tasks"]:
            skipped[entry.get("skipped") or "unknown"] += 1
    return {"tasks_by_family_and_usage": dict(usage.most_common()), "skipped": dict(skipped.most_common()),
            "with_task": sum(1 for e in skills.values() if e["accepted"] and e["tasks"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--build", action="store_true", help="also build every accepted skill (slow)")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    if args.corpus.is_dir():
        report["corpus"] = {**choices(args.corpus), **({"built": built(args.corpus)} if args.build else {})}
    with tempfile.TemporaryDirectory(prefix="family-fit-") as tmp:
        for package in filter(None, args.packages.split(",")):
            where = Path(tmp) / package
            where.mkdir()
            for wheel in fetch(package, where):
                unpack(wheel, where / "unpacked")
            report[package] = {**choices(where / "unpacked"),
                               **({"built": built(where / "unpacked")} if args.build else {})}
    for source, entry in report.items():
        print(source, json.dumps({k: v for k, v in entry.items() if k != "skills"}), flush=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
