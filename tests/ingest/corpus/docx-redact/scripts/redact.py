"""Redact names, e-mail addresses, phone numbers and custom terms from a .docx file."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ooxml_io import Package, merge_runs, paragraph_text, set_run_text

PATTERNS = {
    "email": re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"),
    "phone": re.compile(r"\+?\d[\d\s().-]{7,}\d"),
    "iban": re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}\b"),
}


def build_patterns(terms: list[str], kinds: list[str]) -> list[tuple[str, re.Pattern[str]]]:
    chosen = [(kind, PATTERNS[kind]) for kind in kinds]
    if terms:
        alternation = "|".join(re.escape(term) for term in sorted(terms, key=len, reverse=True))
        chosen.append(("term", re.compile(rf"\b(?:{alternation})\b", re.IGNORECASE)))
    return chosen


def redact_text(text: str, patterns: list[tuple[str, re.Pattern[str]]], counts: dict[str, int]) -> str:
    for kind, pattern in patterns:
        text, found = pattern.subn(lambda m: "\u2588" * len(m.group(0)), text)
        counts[kind] = counts.get(kind, 0) + found
    return text


def redact(source: Path, target: Path, patterns: list[tuple[str, re.Pattern[str]]]) -> dict[str, int]:
    package = Package(source)
    counts: dict[str, int] = {}
    try:
        for part in package.text_parts():
            for paragraph in package.paragraphs(part):
                original = paragraph_text(paragraph)
                changed = redact_text(original, patterns, counts)
                if changed != original:
                    run = merge_runs(paragraph)
                    if run is not None:
                        set_run_text(run, changed)
        package.save(target)
    finally:
        package.close()
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("docx", type=Path)
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument("--terms", type=Path, help="text file with one name or term per line")
    parser.add_argument("--kinds", default="email,phone", help="comma list of: " + ", ".join(PATTERNS))
    args = parser.parse_args()
    terms = [t.strip() for t in args.terms.read_text().splitlines() if t.strip()] if args.terms else []
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in PATTERNS]
    if unknown:
        print(f"unknown kinds: {unknown}", file=sys.stderr)
        return 2
    target = args.output or args.docx.with_name(args.docx.stem + ".redacted.docx")
    counts = redact(args.docx, target, build_patterns(terms, kinds))
    print(json.dumps({"output": str(target), "redactions": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
