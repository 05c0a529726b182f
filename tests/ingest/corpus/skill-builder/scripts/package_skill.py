"""Zip a skill folder after checking that it has a SKILL.md with a name and a description."""

from __future__ import annotations

import argparse
import re
import sys
import zipfile
from pathlib import Path

SKIP = {"__pycache__", ".DS_Store", ".git"}


def check(skill: Path) -> list[str]:
    problems = []
    skill_md = skill / "SKILL.md"
    if not skill_md.is_file():
        return ["SKILL.md is missing"]
    text = skill_md.read_text()
    match = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    if match is None:
        return ["SKILL.md has no front matter"]
    front = match.group(1)
    for key in ("name", "description"):
        if not re.search(rf"^{key}:\s*\S", front, re.M):
            problems.append(f"front matter has no {key}")
    return problems


def package(skill: Path, out_dir: Path) -> Path:
    target = out_dir / f"{skill.name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(skill.rglob("*")):
            if path.is_file() and not SKIP.intersection(path.parts):
                archive.write(path, path.relative_to(skill.parent))
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("skill", type=Path)
    parser.add_argument("--out", type=Path, default=Path("."))
    args = parser.parse_args()
    problems = check(args.skill)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(package(args.skill, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
