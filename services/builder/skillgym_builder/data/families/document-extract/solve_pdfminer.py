# --- extracting the documents from raw page characters (pdfminer.six) and the Word XML (stdlib) ---
import csv
import datetime
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
import zipfile

from pdfminer.high_level import extract_pages
from pdfminer.layout import LTChar, LTContainer
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import resolve1
from pdfminer.utils import decode_text

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skillrules

SCHEMA = json.loads(sys.argv[1])
DATE_FORMAT = SCHEMA["date_format"] or skillrules.date_format()
HEADER = [label for label, _, _ in SCHEMA["columns"]]
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
DC = "{http://purl.org/dc/elements/1.1/}"
MONTHS = {m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                      "dec"], start=1)}


def as_date(text):
    text = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        day = datetime.date.fromisoformat(text)
    elif m := re.fullmatch(r"(\d{1,2}) ([A-Za-z]{3}) (\d{4})", text):
        day = datetime.date(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))
    elif m := re.fullmatch(r"([A-Za-z]+) (\d{1,2}), (\d{4})", text):
        day = datetime.date(int(m.group(3)), MONTHS[m.group(1)[:3].lower()], int(m.group(2)))
    else:
        raise ValueError(f"unknown date {text!r}")
    return day.strftime(DATE_FORMAT)


def as_money(text):
    cleaned = re.sub(r"[$,\s]", "", text)
    negative = cleaned.startswith("(") or cleaned.startswith("-")
    return round(-abs(float(cleaned.strip("()-"))) if negative else float(cleaned), 2)


def convert(text, kind):
    text = " ".join(text.split())
    return as_date(text) if kind == "date" else as_money(text) if kind == "money" else int(text) if kind == "int" else text


def characters(item):
    if isinstance(item, LTChar):
        yield item
    elif isinstance(item, LTContainer):
        for child in item:
            yield from characters(child)


def pdf_lines(path):
    """Each page's text lines top to bottom, a line split into segments where the characters leave a gap."""
    pages = []
    for layout in extract_pages(path):
        by_line = {}
        for char in characters(layout):
            by_line.setdefault(round(char.y0), []).append(char)
        lines = []
        for y in sorted(by_line, reverse=True):
            chars = sorted(by_line[y], key=lambda c: c.x0)
            segments, current, last = [], "", None
            for char in chars:
                if last is not None and char.x0 - last > 4:
                    segments.append(current.strip())
                    current = ""
                current += char.get_text()
                last = char.x1
            segments.append(current.strip())
            lines.append([s for s in segments if s])
        pages.append(lines)
    return pages


def read_pdf(path):
    with open(path, "rb") as handle:
        if not handle.read(5).startswith(b"%PDF-"):
            raise ValueError("not a PDF")
        info = PDFDocument(PDFParser(handle)).info
    meta = {k: resolve1(v) for k, v in (info[0] if info else {}).items()}
    title, author = (decode_text(meta[k]) if isinstance(meta.get(k), bytes) else meta.get(k) for k in ("Title", "Author"))
    pages = pdf_lines(path)
    stamped = any(seg in ("VOID", "DRAFT") for line in pages[0] for seg in line)
    texts, cells = [], []
    for page in pages:
        for line in page:
            if len(line) == len(HEADER):
                if line != HEADER:
                    cells.append(line)
            else:
                texts.append(" ".join(line))
    return title, author, len(pages), texts, cells, stamped


def xml_text(node):
    return "".join(t.text or "" for t in node.iter(f"{W}t"))


def read_docx(path):
    with zipfile.ZipFile(path) as package:
        body = ET.fromstring(package.read("word/document.xml")).find(f"{W}body")
        core = ET.fromstring(package.read("docProps/core.xml"))
    texts, cells = [], []
    for node in body:
        if node.tag == f"{W}p":
            texts.append(xml_text(node))
        elif node.tag == f"{W}tbl":
            for row in node.iter(f"{W}tr"):
                line = [xml_text(cell).strip() for cell in row.iter(f"{W}tc")]
                if line != HEADER:
                    cells.append(line)
    stamped = any(t.strip() in ("VOID", "DRAFT") for t in texts)
    return core.findtext(f"{DC}title"), core.findtext(f"{DC}creator"), None, texts, cells, stamped


def labelled(texts):
    fields, total = {}, None
    for line in texts:
        for label, key, kind in SCHEMA["fields"]:
            if line.strip().startswith(label + ":") and key not in fields:
                fields[key] = convert(line.strip()[len(label) + 1:], kind)
        if line.strip().startswith(SCHEMA["total_label"] + ":"):
            total = as_money(line.strip()[len(SCHEMA["total_label"]) + 1:])
    return fields, total


documents, skipped, unreadable = {}, [], []
for name in sorted(os.listdir("documents"), reverse=True):
    path = f"documents/{name}"
    try:
        title, author, pages, texts, cells, stamped = (read_docx if name.endswith(".docx") else read_pdf)(path)
    except Exception as exc:
        print(f"{path}: {type(exc).__name__}: {exc}")
        unreadable.append(path)
        continue
    if stamped:
        skipped.append(path)
        continue
    fields, total = labelled(texts)
    rows = [{key: convert(cell, kind) for (_, key, kind), cell in zip(SCHEMA["columns"], line, strict=True)} for line in cells]
    documents[path] = {"title": title, "author": author, "pages": pages, "fields": fields, "rows": rows,
                       "total": total}

os.makedirs("out", exist_ok=True)
with open("out/documents.json", "w", encoding="utf-8") as handle:
    json.dump({"documents": documents, "skipped": sorted(skipped), "unreadable": sorted(unreadable)}, handle)
keys = [key for _, key, _ in SCHEMA["columns"]]
with open("out/rows.csv", "w", encoding="utf-8", newline="") as handle:
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow([*reversed(keys), "document"])
    for path in sorted(documents, reverse=True):
        for row in documents[path]["rows"]:
            writer.writerow([*(row[k] for k in reversed(keys)), path])
