"""Dedup that looks at the scripts: same program under a rewritten SKILL.md clusters; a shared helper does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from skillgym_ingest.content import build_content
from skillgym_ingest.loader import load_folder
from skillgym_ingest.pipeline import ingest
from skillgym_ingest.script_signature import ScriptFingerprint, fingerprint, shared_files, strip_comments
from skillgym_ingest.settings import IngestSettings

from tests.ingest.skillkit import write_skill

MAIN = '''"""Summarise sales per region and month from a CSV export."""

import csv
import sys
from collections import defaultdict


def load(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def month_of(row):
    return row["date"][:7]


def totals(rows, key):
    result = defaultdict(float)
    for row in rows:
        result[(row[key], month_of(row))] += float(row["amount"] or 0)
    return result


def top_regions(result, count):
    per_region = defaultdict(float)
    for (region, _), amount in result.items():
        per_region[region] += amount
    return sorted(per_region.items(), key=lambda item: item[1], reverse=True)[:count]


def write_table(result, out):
    months = sorted({month for _, month in result})
    regions = sorted({region for region, _ in result})
    with open(out, "w") as handle:
        handle.write("| region | " + " | ".join(months) + " |\\n")
        for region in regions:
            cells = [f"{result.get((region, month), 0.0):.2f}" for month in months]
            handle.write(f"| {region} | " + " | ".join(cells) + " |\\n")


def main(argv):
    rows = load(argv[1])
    result = totals(rows, "region")
    write_table(result, argv[2])
    for region, amount in top_regions(result, 3):
        print(region, round(amount, 2))


if __name__ == "__main__":
    main(sys.argv)
'''
OTHER = MAIN.replace("region", "channel").replace("month", "week").replace("[:7]", "[:10]").replace(
    "def top_", "def best_").replace("amount", "revenue").replace("sorted", "list")
HELPER = '''def fail(message):
    raise SystemExit(f"error: {message}")
'''
UTILS = '''import sys


def fail(message, code=2):
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)


def human_bytes(size):
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"
'''
DOC_A = ("# Sales by region\n\nUse when the user wants monthly sales totals per region from a CSV export.\n\n"
         "Run `python scripts/report.py sales.csv table.md` and show the table and the top three regions.\n")
DOC_B = ("# Regional revenue overview\n\nWhen someone shares an order export and asks how each area did over the "
         "year, this produces a month-by-area grid.\n\nCall the bundled program with the input file and an output "
         "path; it prints the three strongest areas, which you should mention first.\n")
DOC_C = ("# Channel weekly totals\n\nGroups a marketing export by channel and week and writes a Markdown table.\n\n"
         "Invoke `python scripts/report.py export.csv weekly.md`.\n")


def records(corpus: Path) -> dict[str, object]:
    result = ingest([corpus], settings=IngestSettings(workers=1))
    return {"funnel": result.funnel, **{r.name: r for r in result.records}}


def test_same_scripts_under_a_rewritten_skill_md_are_duplicates(tmp_path: Path) -> None:
    commented = MAIN.replace("def load(path):", "# Read every row up front; exports are small.\ndef load(path):")
    write_skill(tmp_path, "sales-by-region", description="Monthly sales per region.", body=DOC_A,
                files={"scripts/report.py": MAIN})
    write_skill(tmp_path, "regional-revenue", description="Revenue per area and month.", body=DOC_B,
                files={"scripts/report.py": commented.replace("    ", "  ")})
    found = records(tmp_path)
    first, copy = found["regional-revenue"], found["sales-by-region"]
    assert copy.duplicate_of == first.skill_id and copy.duplicate_kind == "near"  # type: ignore[attr-defined]
    assert found["funnel"]["duplicate:near_by_scripts"] == 1  # type: ignore[index]


def test_a_shared_helper_file_does_not_make_duplicates(tmp_path: Path) -> None:
    license_text = "MIT License\n\nPermission is hereby granted, free of charge, to any person.\n" * 5
    for name, script, doc in (("sales-by-region", MAIN, DOC_A), ("channel-weekly", OTHER, DOC_C)):
        write_skill(tmp_path, name, description=f"{name} report.", body=doc,
                    files={"scripts/report.py": script, "scripts/utils.py": HELPER, "LICENSE": license_text})
    found = records(tmp_path)
    assert all(found[n].duplicate_of is None for n in ("sales-by-region", "channel-weekly"))  # type: ignore[attr-defined]


def test_small_scripts_alone_never_identify_a_skill(tmp_path: Path) -> None:
    write_skill(tmp_path, "a", description="One thing.", body=DOC_A, files={"scripts/utils.py": UTILS})
    write_skill(tmp_path, "b", description="Another thing.", body=DOC_C, files={"scripts/utils.py": UTILS})
    assert records(tmp_path)["b"].duplicate_of is None  # type: ignore[attr-defined]


def _fingerprint(root: Path) -> ScriptFingerprint:
    folder = load_folder(root, str(root), max_files=100, max_bytes=1 << 24, max_file_bytes=1 << 22)
    return fingerprint(build_content(folder, 1 << 20), IngestSettings())


def test_file_hashes_ignore_comments_whitespace_and_paths(tmp_path: Path) -> None:
    reformatted = MAIN.replace('"""Summarise sales per region and month from a CSV export."""', '"""Other words."""')
    reformatted = reformatted.replace("\n\n\n", "\n\n# section\n\n").replace("    ", "\t")
    a = _fingerprint(write_skill(tmp_path, "a", body=DOC_A, files={"scripts/report.py": MAIN}))
    b = _fingerprint(write_skill(tmp_path, "b", body=DOC_B, files={"bin/sales.py": reformatted}))
    assert shared_files(a, b) == [("scripts/report.py", "bin/sales.py")]
    assert a.signature is not None and b.signature is not None and np.array_equal(a.signature, b.signature)
    small = _fingerprint(write_skill(tmp_path, "c", body=DOC_C, files={
        "scripts/utils.py": UTILS, "scripts/shim.py": HELPER, "x/__init__.py": ""}))
    assert small.signature is None  # too little code to identify a skill
    assert list(small.file_hashes) == ["scripts/utils.py"]  # the shim and the empty file are below the file minimum


def test_comment_stripping_keeps_strings_urls_and_shell_specials() -> None:
    python = 'x = "#fff"  # colour\nurl = "https://a.io/b"\n"""doc"""\n'
    assert strip_comments(python, ".py").split() == ['x', '=', '"#fff"', 'url', '=', '"https://a.io/b"']
    assert strip_comments("n=$# # count\n", ".sh").split() == ["n=$#"]
    assert strip_comments("a = b; // note\n/* block */ c()\n", ".js").split() == ["a", "=", "b;", "c()"]
