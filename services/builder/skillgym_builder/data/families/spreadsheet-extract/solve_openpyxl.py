# --- extracting the expense reports with openpyxl ---
import datetime
import json
import os
import sys

from openpyxl import load_workbook

FILES = json.loads(sys.argv[1])
LABELS = {"employee": "employee", "department": "department", "period start": "period_start",
          "period end": "period_end", "report id": "report_id"}


def amount(value):
    if isinstance(value, (int, float)):
        return round(float(value), 2)
    text = str(value).replace("USD", "").replace("$", "").replace(",", "").replace(" ", "")
    return round(float(text), 2)


def extract(path):
    wb = load_workbook(path)
    ws = wb["Report"]
    fields, header_row, columns = {}, None, {}
    for row in ws.iter_rows():
        for cell in row:
            key = str(cell.value).strip().rstrip(":").lower() if isinstance(cell.value, str) else None
            if key in LABELS:
                values = [c.value for c in row if c.column > cell.column and c.value not in (None, "")]
                fields[LABELS[key]] = str(values[0]).strip()
            if cell.value == "Date" and header_row is None:
                header_row = cell.row
                columns = {str(c.value): c.column for c in row if c.value}
    codes = {}
    if "Codes" in wb.sheetnames:
        codes = {str(r[0]): str(r[1]) for r in wb["Codes"].iter_rows(min_row=2, values_only=True) if r[0]}
    items, skipped = [], []
    for row in ws.iter_rows(min_row=header_row + 1):
        values = {name: row[column - 1] for name, column in columns.items()}
        if row[0].value == "Total":
            break
        if all(c.value in (None, "") for c in row):
            continue
        cell = values["Amount"]
        if cell.data_type == "e" or (isinstance(cell.value, str) and cell.value.startswith("#")):
            skipped.append(cell.row)
            continue
        date = values["Date"].value
        category = str(values["Category"].value).strip()
        items.append({
            "date": date.date().isoformat() if isinstance(date, datetime.datetime) else str(date),
            "category": codes.get(category, category),
            "description": str(values["Description"].value).strip(),
            "amount": amount(cell.value),
        })
    totals = {}
    for item in items:
        totals[item["category"]] = round(totals.get(item["category"], 0) + item["amount"], 2)
    return {**fields, "items": items, "skipped_rows": skipped, "totals_by_category": totals,
            "total": round(sum(i["amount"] for i in items), 2)}


result = {name: extract(name) for name in FILES}
os.makedirs("out", exist_ok=True)
with open("out/expenses.json", "w", encoding="utf-8") as handle:
    json.dump({"reports": result}, handle, indent=2)
