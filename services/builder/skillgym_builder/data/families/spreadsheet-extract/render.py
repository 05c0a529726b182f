"""Writes the expense workbooks of one instance with openpyxl (run in the sandbox)."""

import datetime
import io
import json
import os
import re
import sys
import zipfile

from openpyxl import Workbook
from openpyxl.styles import Font

FIXED = (2025, 4, 1, 9, 0, 0)


def table(ws, top, rows, header):
    for column, title in enumerate(header, start=1):
        ws.cell(row=top, column=column, value=title).font = Font(bold=True)
    for offset, row in enumerate(rows, start=1):
        for column, value in enumerate(row, start=1):
            if isinstance(value, dict) and "date" in value:
                cell = ws.cell(row=top + offset, column=column, value=datetime.date.fromisoformat(value["date"]))
                cell.number_format = "yyyy-mm-dd"
            elif isinstance(value, dict) and "error" in value:
                ws.cell(row=top + offset, column=column, value=value["error"]).data_type = "e"
            elif value is not None:
                ws.cell(row=top + offset, column=column, value=value)


def build(book):
    wb = Workbook()
    ws = wb.active
    ws.title = "Report"
    ws["A1"] = "Expense Report"
    ws["A1"].font = Font(bold=True, size=14)
    ws.merge_cells("A1:E1")
    for label in book["labels"]:
        ws[label["label_cell"]] = label["label"]
        ws[label["value_cell"]] = label["value"]
    table(ws, book["header_row"], book["rows"], book["header"])
    ws.cell(row=book["total_row"], column=1, value="Total")
    ws.cell(row=book["total_row"], column=4, value=book["total_formula"])
    for extra in book["sheets"]:
        sheet = wb.create_sheet(extra["title"])
        table(sheet, 1, extra["rows"], extra["header"])
    wb.properties.creator = "finance-export"
    return wb


def deterministic(data):
    """The saved workbook with fixed timestamps (openpyxl stamps the save time)."""
    stamp = "2025-04-01T09:00:00Z"
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>" + stamp.encode(), content)
            target.writestr(zipfile.ZipInfo(info.filename, date_time=FIXED), content, zipfile.ZIP_DEFLATED)
    return out.getvalue()


params_path, out_dir = sys.argv[1], sys.argv[2]
with open(params_path, encoding="utf-8") as handle:
    params = json.load(handle)
for book in params["books"]:
    buffer = io.BytesIO()
    build(book).save(buffer)
    path = os.path.join(out_dir, book["file"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(deterministic(buffer.getvalue()))
