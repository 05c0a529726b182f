"""Rank files in a Cobertura coverage report by how far they fall below a line-coverage threshold."""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET


def file_rates(report: str) -> dict[str, tuple[float, list[int]]]:
    tree = ET.parse(report)
    rates: dict[str, tuple[float, list[int]]] = {}
    for cls in tree.iter("class"):
        lines = cls.find("lines")
        if lines is None:
            continue
        hits = [(int(line.get("number", 0)), int(line.get("hits", 0))) for line in lines.iter("line")]
        if not hits:
            continue
        missed = [number for number, count in hits if count == 0]
        rate = 100.0 * (len(hits) - len(missed)) / len(hits)
        rates[cls.get("filename", "?")] = (rate, missed)
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("report")
    parser.add_argument("--threshold", type=float, default=80.0)
    args = parser.parse_args()
    below = sorted(
        ((rate, name, missed) for name, (rate, missed) in file_rates(args.report).items() if rate < args.threshold),
    )
    for rate, name, missed in below:
        preview = ", ".join(str(n) for n in missed[:10])
        print(f"{rate:5.1f}%  {name}  missed lines: {preview}{' ...' if len(missed) > 10 else ''}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
