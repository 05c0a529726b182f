"""Profile a CSV file: column types, missing values, distinct counts, numeric summaries, top values.

Writes a Markdown report. Reads the file in one pass and keeps at most a sample of values per column.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from utils import fail, human_bytes

MISSING = {"", "na", "n/a", "null", "none", "nan", "-"}
SAMPLE_LIMIT = 250_000


@dataclass
class ColumnStats:
    name: str
    missing: int = 0
    numbers: list[float] = field(default_factory=list)
    texts: Counter[str] = field(default_factory=Counter)
    seen: int = 0

    def add(self, raw: str) -> None:
        self.seen += 1
        value = raw.strip()
        if value.lower() in MISSING:
            self.missing += 1
            return
        try:
            number = float(value.replace(",", ""))
        except ValueError:
            self.texts[value] += 1
            return
        if math.isfinite(number) and len(self.numbers) < SAMPLE_LIMIT:
            self.numbers.append(number)

    @property
    def kind(self) -> str:
        if self.numbers and not self.texts:
            return "integer" if all(n.is_integer() for n in self.numbers) else "float"
        if self.numbers and self.texts:
            return "mixed"
        return "text" if self.texts else "empty"

    def distinct(self) -> int:
        return len(self.texts) + len(set(self.numbers))

    def summary(self) -> dict[str, str]:
        row = {
            "column": self.name,
            "type": self.kind,
            "missing": f"{self.missing} ({100 * self.missing / max(self.seen, 1):.1f}%)",
            "distinct": str(self.distinct()),
        }
        if self.numbers:
            row["min"] = f"{min(self.numbers):g}"
            row["median"] = f"{statistics.median(self.numbers):g}"
            row["max"] = f"{max(self.numbers):g}"
            row["stdev"] = f"{statistics.pstdev(self.numbers):.3g}"
        if self.texts:
            row["top"] = ", ".join(f"{value} ({count})" for value, count in self.texts.most_common(3))
        return row


def sniff_dialect(path: Path) -> type[csv.Dialect] | csv.Dialect:
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        sample = handle.read(64 * 1024)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def profile(path: Path, delimiter: str | None = None) -> tuple[list[ColumnStats], int]:
    dialect: type[csv.Dialect] | csv.Dialect = sniff_dialect(path)
    if delimiter:
        dialect = csv.excel
        dialect.delimiter = delimiter
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.reader(handle, dialect)
        header = next(reader, None)
        if header is None:
            fail(f"{path} is empty")
        columns = [ColumnStats(name.strip() or f"column_{i + 1}") for i, name in enumerate(header)]
        rows = 0
        for record in reader:
            rows += 1
            for column, raw in zip(columns, record, strict=False):
                column.add(raw)
    return columns, rows


def render(path: Path, columns: list[ColumnStats], rows: int) -> str:
    keys = ["column", "type", "missing", "distinct", "min", "median", "max", "stdev", "top"]
    lines = [
        f"# Profile of {path.name}",
        "",
        f"- Rows: {rows}",
        f"- Columns: {len(columns)}",
        f"- File size: {human_bytes(path.stat().st_size)}",
        "",
        "| " + " | ".join(keys) + " |",
        "|" + "---|" * len(keys),
    ]
    for column in columns:
        row = column.summary()
        lines.append("| " + " | ".join(row.get(key, "") for key in keys) + " |")
    warnings = [c.name for c in columns if c.kind == "mixed"]
    if warnings:
        lines += ["", "Columns mixing numbers and text: " + ", ".join(warnings)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=Path("profile.md"))
    parser.add_argument("--delimiter", help="skip detection and use this separator")
    args = parser.parse_args()
    if not args.csv.is_file():
        fail(f"no such file: {args.csv}")
    columns, rows = profile(args.csv, args.delimiter)
    args.output.write_text(render(args.csv, columns, rows))
    print(f"wrote {args.output} ({rows} rows, {len(columns)} columns)")


if __name__ == "__main__":
    main()
