"""Merge PDFs, optionally selecting page ranges, and add a bookmark per source file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pypdf import PdfReader, PdfWriter


def parse_ranges(spec: str, pages: int) -> list[int]:
    selected: list[int] = []
    for part in spec.split(","):
        if "-" in part:
            start, end = part.split("-", 1)
            selected.extend(range(int(start) - 1, min(int(end), pages)))
        elif part:
            selected.append(int(part) - 1)
    return [p for p in selected if 0 <= p < pages]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inputs", nargs="+", help="file.pdf or file.pdf:1-3,7")
    parser.add_argument("-o", "--output", type=Path, default=Path("merged.pdf"))
    args = parser.parse_args()
    writer = PdfWriter()
    for item in args.inputs:
        name, _, spec = item.partition(":")
        reader = PdfReader(name)
        pages = parse_ranges(spec, len(reader.pages)) if spec else list(range(len(reader.pages)))
        first = len(writer.pages)
        for number in pages:
            writer.add_page(reader.pages[number])
        writer.add_outline_item(Path(name).stem, first)
    with args.output.open("wb") as handle:
        writer.write(handle)
    print(f"wrote {args.output} ({len(writer.pages)} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
