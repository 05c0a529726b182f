"""Writes the corporate card statement workbook of one instance with openpyxl (run in the sandbox)."""

import datetime
import io
import json
import os
import re
import sys
import zipfile

from openpyxl import Workbook
from openpyxl.styles import Font

SAVED = (2025, 1, 1, 0, 0, 0)


def build(rows):
    book = Workbook()
    sheet = book.active
    sheet.title = "Transactions"
    sheet["A1"] = "Corporate card statement"
    sheet["A1"].font = Font(bold=True, size=13)
    sheet["A2"] = "All amounts in USD; purchases are negative"
    for column, title in enumerate(["Reference", "Posted", "Merchant", "Amount"], start=1):
        sheet.cell(row=4, column=column, value=title).font = Font(bold=True)
    for offset, (reference, day, merchant, amount) in enumerate(rows, start=5):
        sheet.cell(row=offset, column=1, value=reference)
        sheet.cell(row=offset, column=2, value=datetime.date.fromisoformat(day)).number_format = "dd mmm yyyy"
        sheet.cell(row=offset, column=3, value=merchant)
        sheet.cell(row=offset, column=4, value=float(amount)).number_format = "#,##0.00"
    book.properties.creator = "card-issuer-export"
    return book


def without_timestamps(data):
    """The saved workbook with fixed zip and document times, so a build is reproducible."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>2025-01-01T00:00:00Z", content)
            target.writestr(zipfile.ZipInfo(info.filename, date_time=SAVED), content, zipfile.ZIP_DEFLATED)
    return out.getvalue()


params_path, out_dir = sys.argv[1], sys.argv[2]
with open(params_path, encoding="utf-8") as handle:
    params = json.load(handle)
buffer = io.BytesIO()
build(params["rows"]).save(buffer)
path = os.path.join(out_dir, params["file"])
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as handle:
    handle.write(without_timestamps(buffer.getvalue()))
