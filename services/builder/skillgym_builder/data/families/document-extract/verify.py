"""Verifier for document-extract: the extracted documents (schema, metadata, page counts re-read
with pdfplumber, fields), the table rows in order with their totals, and the CSV conversion,
against the values planted in the generated documents. Output files are read bounded and never
followed through links."""

import collections
import csv
import io
import json
import math
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, load_expected, run, share

E = load_expected()
MAX_BYTES = 8 * 1024 * 1024
TOP_KEYS = {"documents", "skipped", "unreadable"}
DOCUMENT_KEYS = {"title", "author", "pages", "fields", "rows", "total"}
COLUMNS = E["columns"]  # output key -> code | text | int | money | date


def bounded_text(rel):
    fd = os.open(app_path(rel), os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError(f"{rel} is not a regular file")
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{rel} is larger than {MAX_BYTES} bytes")
    return data.decode("utf-8")


def answer():
    value = json.loads(bounded_text("out/documents.json"))
    if not isinstance(value, dict):
        raise TypeError("documents.json is not an object")
    return value


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_integer(value):
    return is_number(value) and float(value).is_integer()


def text(value):
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return " ".join(value.split())


def typed(value, kind):
    if kind == "int":
        return is_integer(value)
    if kind == "money":
        return is_number(value)
    return isinstance(value, str)


def documents_of(got):
    return [(path, got["documents"][path], want) for path, want in sorted(E["documents"].items())]


def schema():
    got = answer()
    if set(got) != TOP_KEYS or set(got["documents"]) != set(E["documents"]):
        return False
    if not all(isinstance(got[k], list) and all(isinstance(p, str) for p in got[k]) for k in ("skipped", "unreadable")):
        return False
    for _, mine, _ in documents_of(got):
        if not isinstance(mine, dict) or set(mine) != DOCUMENT_KEYS:
            return False
        if not (isinstance(mine["title"], str) and isinstance(mine["author"], str) and is_number(mine["total"])):
            return False
        if not (mine["pages"] is None or is_integer(mine["pages"])):
            return False
        fields = mine["fields"]
        if not isinstance(fields, dict) or set(fields) != set(E["fields"]) or not all(isinstance(v, str) for v in fields.values()):
            return False
        if not isinstance(mine["rows"], list):
            return False
        for row in mine["rows"]:
            if not isinstance(row, dict) or set(row) != set(COLUMNS):
                return False
            if not all(typed(row[key], kind) for key, kind in COLUMNS.items()):
                return False
    return True


def files():
    got = answer()
    return got["skipped"] == E["skipped"] and got["unreadable"] == E["unreadable"] and \
        set(got["documents"]) == set(E["documents"])


def pdf_pages(path):
    """The page count of a PDF, re-read from the (protected) file itself."""
    try:
        import pdfplumber
    except ImportError:
        return None
    with pdfplumber.open(app_path(path)) as pdf:
        return len(pdf.pages)


def metadata():
    for path, mine, want in documents_of(answer()):
        if text(mine["title"]) != want["title"] or text(mine["author"]) != want["author"]:
            return False
        if want["pages"] is None:
            if mine["pages"] is not None:
                return False
            continue
        reread = pdf_pages(path)
        if not is_integer(mine["pages"]) or int(mine["pages"]) != want["pages"] or reread not in (None, want["pages"]):
            return False
    return True


def fields():
    return all(text(mine["fields"][key]) == value for _, mine, want in documents_of(answer())
               for key, value in want["fields"].items())


def documents():
    """The share of the document-level checks met, each reported on its own."""
    return share("documents", [("schema", schema), ("files", files), ("metadata", metadata), ("fields", fields)])


def same_cell(got, want, kind):
    if kind == "int":
        return is_integer(got) and int(got) == want
    if kind == "money":
        return is_number(got) and abs(got - want) <= 0.005
    return text(got) == want


def rows():
    for _, mine, want in documents_of(answer()):
        if not isinstance(mine["rows"], list) or len(mine["rows"]) != len(want["rows"]):
            return False
        for got, expected in zip(mine["rows"], want["rows"], strict=True):
            if not all(same_cell(got[key], expected[key], kind) for key, kind in COLUMNS.items()):
                return False
        if not is_number(mine["total"]) or abs(mine["total"] - want["total"]) > 0.01:
            return False
        if abs(mine["total"] - sum(float(row[E["total_of"]]) for row in mine["rows"])) > 0.01:
            return False
    return True


def cell_key(value, kind):
    if kind == "int":
        number = float(value)
        if not number.is_integer():
            raise ValueError(f"{value!r} is not an integer")
        return int(number)
    if kind == "money":
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{value!r} is not a number")
        return round(number * 100)
    return " ".join(str(value).split())


def table_csv():
    table = [row for row in csv.reader(io.StringIO(bounded_text("out/rows.csv"))) if any(c.strip() for c in row)]
    if not table:
        return False
    header = [name.strip() for name in table[0]]
    if sorted(header) != sorted(["document", *COLUMNS]):
        return False
    kinds = {"document": "text", **COLUMNS}
    got = collections.Counter()
    for row in table[1:]:
        if len(row) != len(header):
            return False
        by_name = dict(zip(header, row, strict=True))
        got[tuple(cell_key(by_name[name], kinds[name]) for name in sorted(kinds))] += 1
    want = collections.Counter()
    for path, document in E["documents"].items():
        for row in document["rows"]:
            values = {"document": path, **row}
            want[tuple(cell_key(values[name], kinds[name]) for name in sorted(kinds))] += 1
    return got == want


run([("documents", documents), ("rows", rows), ("table_csv", table_csv)])
