"""Small command-line front end to openpyxl: info, read, write, edit, format, export."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font, PatternFill


def open_book(path: str) -> Workbook:
    if Path(path).exists():
        return load_workbook(path)
    return Workbook()


def sheet_of(book: Workbook, name: str | None):  # type: ignore[no-untyped-def]
    return book[name] if name else book.active


def info(args: argparse.Namespace) -> dict:
    book = load_workbook(args.file, read_only=True)
    return {"sheets": [{"name": ws.title, "dimensions": ws.dimensions} for ws in book.worksheets]}


def rows_of(args: argparse.Namespace) -> list[list]:
    ws = sheet_of(load_workbook(args.file, data_only=True), args.sheet)
    cells = ws[args.range] if args.range else ws.iter_rows()
    return [[cell.value for cell in row] for row in cells]


def read(args: argparse.Namespace) -> dict | str:
    rows = rows_of(args)
    if args.format == "markdown":
        header, *body = rows or [[]]
        lines = ["| " + " | ".join(str(v) for v in header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join("" if v is None else str(v) for v in row) + " |" for row in body]
        return "\n".join(lines)
    if args.format == "csv":
        return "\n".join(",".join("" if v is None else str(v) for v in row) for row in rows)
    return {"rows": rows}


def write(args: argparse.Namespace) -> dict:
    book = open_book(args.file)
    ws = sheet_of(book, args.sheet)
    start = ws[args.start]
    data = json.loads(args.data)
    for r, row in enumerate(data):
        for c, value in enumerate(row):
            ws.cell(row=start.row + r, column=start.column + c, value=value)
    book.save(args.file)
    return {"written": len(data)}


def edit(args: argparse.Namespace) -> dict:
    book = open_book(args.file)
    sheet_of(book, args.sheet)[args.cell] = args.value
    book.save(args.file)
    return {"cell": args.cell, "value": args.value}


def style(args: argparse.Namespace) -> dict:
    book = load_workbook(args.file)
    ws = sheet_of(book, args.sheet)
    for row in ws[args.range]:
        for cell in row:
            if args.bold:
                cell.font = Font(bold=True)
            if args.fill:
                cell.fill = PatternFill("solid", start_color=args.fill)
    book.save(args.file)
    return {"formatted": args.range}


def export(args: argparse.Namespace) -> dict:
    rows = rows_of(args)
    with open(args.output, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return {"rows": len(rows), "output": args.output}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("info", "read", "write", "edit", "format", "export"):
        cmd = sub.add_parser(name)
        cmd.add_argument("file")
        cmd.add_argument("--sheet")
    sub.choices["read"].add_argument("--range")
    sub.choices["read"].add_argument("--format", choices=["json", "csv", "markdown"], default="json")
    sub.choices["write"].add_argument("--data", required=True)
    sub.choices["write"].add_argument("--start", default="A1")
    sub.choices["edit"].add_argument("cell")
    sub.choices["edit"].add_argument("value")
    sub.choices["format"].add_argument("range")
    sub.choices["format"].add_argument("--bold", action="store_true")
    sub.choices["format"].add_argument("--fill")
    sub.choices["export"].add_argument("output")
    sub.choices["export"].add_argument("--range")
    args = parser.parse_args()
    handlers = {"info": info, "read": read, "write": write, "edit": edit, "format": style, "export": export}
    result = handlers[args.command](args)
    print(result if isinstance(result, str) else json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
