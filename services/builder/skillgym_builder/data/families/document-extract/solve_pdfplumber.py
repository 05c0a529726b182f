# --- extracting the documents: pdfplumber for PDFs, python-docx for Word files ---
import csv
import datetime
import json
import os
import re
import sys

import pdfplumber
from docx import Document

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skillrules

SCHEMA = json.loads(sys.argv[1])
DATE_FORMAT = SCHEMA["date_format"] or skillrules.date_format()
HEADER = [label for label, _, _ in SCHEMA["columns"]]
STAMPS = {"VOID", "DRAFT"}


def as_date(text):
    for pattern in ("%d %b %Y", "%Y-%m-%d", "%B %d, %Y"):
        try:
            return datetime.datetime.strptime(text.strip(), pattern).date().strftime(DATE_FORMAT)
        except ValueError:
            continue
    raise ValueError(f"unknown date {text!r}")


def as_money(text):
    text = text.strip().replace("$", "").replace(",", "")
    if text.startswith("(") and text.endswith(")"):
        return -round(float(text[1:-1]), 2)
    return round(float(text), 2)


def convert(text, kind):
    if kind == "date":
        return as_date(text)
    if kind == "money":
        return as_money(text)
    if kind == "int":
        return int(text.strip())
    return " ".join(text.split())


def fields_and_total(lines):
    fields, total = {}, None
    for line in lines:
        for label, key, kind in SCHEMA["fields"]:
            match = re.match(rf"^\s*{re.escape(label)}:\s*(.+?)\s*$", line)
            if match and key not in fields:
                fields[key] = convert(match.group(1), kind)
        match = re.match(rf"^\s*{re.escape(SCHEMA['total_label'])}:\s*(\S+)\s*$", line)
        if match:
            total = as_money(match.group(1))
    return fields, total


def table_rows(raw_rows):
    out = []
    for cells in raw_rows:
        cells = [" ".join((c or "").split()) for c in cells]
        if cells == HEADER or not any(cells):
            continue  # the header repeated on a later page
        out.append({key: convert(cell, kind) for (_, key, kind), cell in zip(SCHEMA["columns"], cells, strict=True)})
    return out


def read_pdf(path):
    with pdfplumber.open(path) as pdf:
        meta = pdf.metadata or {}
        lines, raw, stamped = [], [], False
        for number, page in enumerate(pdf.pages):
            lines += (page.extract_text() or "").splitlines()
            if number == 0:
                stamped = any(w["text"] in STAMPS for w in page.extract_words())
            for table in page.extract_tables():
                raw += table
        pages = len(pdf.pages)
    return meta.get("Title"), meta.get("Author"), pages, lines, raw, stamped


def read_docx(path):
    document = Document(path)
    lines = [p.text for p in document.paragraphs]
    raw = [[cell.text for cell in row.cells] for table in document.tables for row in table.rows]
    props = document.core_properties
    stamped = any(line.strip() in STAMPS for line in lines)
    return props.title, props.author, None, lines, raw, stamped


documents, skipped, unreadable = {}, [], []
for name in sorted(os.listdir("documents")):
    path = f"documents/{name}"
    try:
        title, author, pages, lines, raw, stamped = (read_docx if name.endswith(".docx") else read_pdf)(path)
    except Exception as exc:  # not a PDF or Word file after all
        print(f"{path}: unreadable ({type(exc).__name__})")
        unreadable.append(path)
        continue
    if stamped:
        skipped.append(path)
        continue
    fields, total = fields_and_total(lines)
    documents[path] = {"title": title, "author": author, "pages": pages, "fields": fields,
                       "rows": table_rows(raw), "total": total}

os.makedirs("out", exist_ok=True)
with open("out/documents.json", "w", encoding="utf-8") as handle:
    json.dump({"documents": documents, "skipped": skipped, "unreadable": unreadable}, handle, indent=2)
keys = [key for _, key, _ in SCHEMA["columns"]]
with open("out/rows.csv", "w", encoding="utf-8", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["document", *keys])
    for path, doc in documents.items():
        for row in doc["rows"]:
            writer.writerow([path, *(f"{row[k]:.2f}" if isinstance(row[k], float) else row[k] for k in keys)])
print(f"extracted {len(documents)} documents, skipped {skipped}, unreadable {unreadable}")
