"""The soak's input: the example skills, and for longer soaks variants of them that differ in
one closing section (new content, so new ids all the way down the pipeline)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection
from pathlib import Path

EXAMPLE_SKILLS = Path(__file__).resolve().parents[3] / "examples" / "skills"
# variants of one skill are near-duplicates by design: ingestion must keep them all
INGEST_ENV = {"SKILLGYM_INGEST_DEDUP": "false"}

VARIANT_SECTION = """
## Before you finish ({n})

Re-read the inputs once more and check that every output file the procedure names exists
(pass {n} of the review).
"""


def soak_input(dest: Path, *, skills: int | None = None, variants: int = 0) -> Path:
    """``dest`` filled with the first ``skills`` example skills (all by default) and
    ``variants`` variants of each."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    examples = sorted(p for p in EXAMPLE_SKILLS.iterdir() if (p / "SKILL.md").exists())[:skills]
    for example in examples:
        shutil.copytree(example, dest / example.name)
        for n in range(1, variants + 1):
            variant = dest / f"{example.name}-v{n}"
            shutil.copytree(example, variant)
            skill_md = variant / "SKILL.md"
            skill_md.write_text(skill_md.read_text() + VARIANT_SECTION.format(n=n))
    return dest



def in_waves(skills: Path, count: int, dest: Path, accepted: Collection[str]) -> list[Path]:
    """The skills of ``skills`` split into up to ``count`` folders under ``dest``: the same
    input, published a part at a time so that there is work in flight for longer. Skills named in
    ``accepted`` (those ingestion keeps) are dealt round-robin; the rest go with the first part."""
    shutil.rmtree(dest, ignore_errors=True)
    folders = [dest / f"wave-{n + 1}" for n in range(count)]
    kept = sorted(p for p in skills.iterdir() if p.is_dir() and p.name in accepted)
    for index, skill in enumerate(kept):
        shutil.copytree(skill, folders[index % count] / skill.name)
    for skill in sorted(p for p in skills.iterdir() if p.is_dir() and p.name not in accepted):
        shutil.copytree(skill, folders[0] / skill.name)
    return [folder for folder in folders if folder.exists()]


def accepted_skills(ingest_out: Path, ingested_ids: Collection[str]) -> set[str]:
    """Folder names of the skills an ingest run (its ``--out`` folder) published, given the
    skill ids that reached the bus."""
    names = set()
    for line in (ingest_out / "skills.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("skill_id") in ingested_ids:
            names.add(Path(record["source"]).name)
    return names
