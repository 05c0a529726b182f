"""Helpers that write hand-made skill folders for the ingest tests."""

from __future__ import annotations

from pathlib import Path

GOOD_BODY = """# CSV report

Use this skill when the user asks to turn a CSV export into a summary report.

## Steps
1. Read the input file `data.csv` from the working directory.
2. Run `python scripts/summarize.py data.csv report.md` to compute totals for each column.
3. Check that the report lists every column and write it to `report.md`.
"""

GOOD_SCRIPT = """import csv
import sys


def main(src: str, dst: str) -> None:
    with open(src, newline="") as handle:
        rows = list(csv.DictReader(handle))
    with open(dst, "w") as out:
        out.write(f"rows: {len(rows)}\\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
"""


def write_skill(
    parent: Path,
    folder: str = "csv-report",
    *,
    name: str | None = None,
    description: str = "Summarize a CSV export into a Markdown report with totals for each column.",
    body: str = GOOD_BODY,
    files: dict[str, str | bytes] | None = None,
    front_matter: str | None = None,
    skill_md_name: str = "SKILL.md",
) -> Path:
    root = parent / folder
    root.mkdir(parents=True, exist_ok=True)
    if front_matter is None:
        front_matter = f"name: {name if name is not None else folder}\ndescription: {description}\n"
    (root / skill_md_name).write_text(f"---\n{front_matter}---\n{body}")
    for rel, data in ({"scripts/summarize.py": GOOD_SCRIPT} if files is None else files).items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data)
    return root


def analyze(parent: Path, folder: str = "csv-report", **kwargs: object):  # type: ignore[no-untyped-def]
    """Write a skill and return its analysed SkillRecord (no corpus-level dedup)."""
    from skillgym_ingest.analyze import analyze_path
    from skillgym_ingest.settings import IngestSettings

    root = write_skill(parent, folder, **kwargs)  # type: ignore[arg-type]
    return analyze_path(root, str(root), IngestSettings(workers=1)).record


def encrypted_zip_bytes(entries: dict[str, bytes]) -> bytes:
    """A zip whose entries carry the 'encrypted' flag bit (zipfile cannot write encrypted zips,
    so the flag is set in the local and central headers after writing)."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    raw = bytearray(buffer.getvalue())
    for signature, flag_offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (position := raw.find(signature, start)) != -1:
            raw[position + flag_offset] |= 0x1
            start = position + 4
    return bytes(raw)
