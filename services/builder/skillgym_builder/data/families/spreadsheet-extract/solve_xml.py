# --- extracting the expense reports from the workbook XML (standard library only) ---
import datetime
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
import zipfile

FILES = json.loads(sys.argv[1])
NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
      "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships"}
RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
LABELS = {"employee": "employee", "department": "department", "period start": "period_start",
          "period end": "period_end", "report id": "report_id"}


def sheets(book):
    workbook = ET.fromstring(book.read("xl/workbook.xml"))
    rels = ET.fromstring(book.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target") for r in rels.iter(RELS + "Relationship")}
    out = {}
    for sheet in workbook.find("m:sheets", NS):
        target = targets[sheet.get(f"{{{NS['r']}}}id")]
        out[sheet.get("name")] = "xl/" + target.lstrip("/").removeprefix("xl/")
    return out


def cells(book, path, strings):
    """{row: {column letter: (type, value)}}"""
    grid = {}
    for c in ET.fromstring(book.read(path)).iter(f"{{{NS['m']}}}c"):
        ref = c.get("r")
        column, row = re.match(r"([A-Z]+)(\d+)", ref).groups()
        kind, v = c.get("t", "n"), c.find("m:v", NS)
        if kind == "s":
            value = strings[int(v.text)]
        elif kind == "inlineStr":
            value = "".join(t.text or "" for t in c.iter(f"{{{NS['m']}}}t"))
        elif v is None or v.text is None:
            continue
        else:
            value = v.text
        grid.setdefault(int(row), {})[column] = (kind, value)
    return grid


def amount(text):
    return round(float(text.replace("USD", "").replace("$", "").replace(",", "").replace(" ", "")), 2)


def extract(name):
    with zipfile.ZipFile(name) as book:
        strings = []
        if "xl/sharedStrings.xml" in book.namelist():
            for si in ET.fromstring(book.read("xl/sharedStrings.xml")).iter(f"{{{NS['m']}}}si"):
                strings.append("".join(t.text or "" for t in si.iter(f"{{{NS['m']}}}t")))
        paths = sheets(book)
        grid = cells(book, paths["Report"], strings)
        codes = {}
        if "Codes" in paths:
            code_grid = cells(book, paths["Codes"], strings)
            codes = {r["A"][1]: r["B"][1] for n, r in code_grid.items() if n > 1 and "A" in r and "B" in r}
    fields, header, columns = {}, None, {}
    for number in sorted(grid):
        row = grid[number]
        for column in sorted(row, key=lambda c: (len(c), c)):
            kind, value = row[column]
            key = value.strip().rstrip(":").lower() if kind in ("s", "inlineStr", "str") else None
            if key in LABELS:
                later = [row[c][1] for c in sorted(row, key=lambda c: (len(c), c)) if (len(c), c) > (len(column), column)]
                fields[LABELS[key]] = later[0].strip()
            if value == "Date" and header is None:
                header, columns = number, {v: c for c, (k, v) in row.items()}
    items, skipped = [], []
    for number in sorted(n for n in grid if n > header):
        row = grid[number]
        if row.get("A", ("", ""))[1] == "Total":
            break
        kind, value = row.get(columns["Amount"], ("n", None))
        if kind == "e" or (value or "").startswith("#"):
            skipped.append(number)
            continue
        serial = float(row[columns["Date"]][1])
        category = row[columns["Category"]][1].strip()
        items.append({
            "date": (datetime.date(1899, 12, 30) + datetime.timedelta(days=int(serial))).isoformat(),
            "category": codes.get(category, category),
            "description": row[columns["Description"]][1].strip(),
            "amount": amount(value),
        })
    totals = {}
    for item in items:
        totals[item["category"]] = round(totals.get(item["category"], 0) + item["amount"], 2)
    return {**fields, "items": items[::-1], "skipped_rows": skipped[::-1], "totals_by_category": totals,
            "total": round(sum(i["amount"] for i in items), 2)}


os.makedirs("out", exist_ok=True)
with open("out/expenses.json", "w", encoding="utf-8") as handle:
    json.dump({"reports": {name: extract(name) for name in FILES}}, handle)
