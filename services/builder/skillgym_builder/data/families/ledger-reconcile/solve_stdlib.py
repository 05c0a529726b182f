# --- closing the month with csv and decimal only (the workbook read as XML) ---
import csv
import datetime
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from decimal import ROUND_HALF_UP, Decimal

from ledgerfacts import category_limits, receipt_threshold, stage_probabilities

TASK = json.loads(sys.argv[1])
TOLERANCE, WINDOW = Decimal(TASK["tolerance"]), int(TASK["window"])
MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def to_cent(value):
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def parse_amount(text):
    cleaned = (text or "").replace(",", "").strip()
    return Decimal(cleaned) if cleaned else Decimal(0)


def rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def policy_figure(name, reader):
    if name not in TASK["from_skill"]:
        given = TASK["rules"][name]
        return {k: Decimal(v) for k, v in given.items()} if isinstance(given, dict) else Decimal(given)
    value = reader()
    if value is None:
        raise SystemExit(f"{name} missing from the skill")
    return value


threshold = policy_figure("receipt_threshold", receipt_threshold)
limits = policy_figure("category_limits", category_limits)
stages = {k.strip().lower(): v for k, v in policy_figure("stage_probabilities", stage_probabilities).items()}
rates = {}
if TASK["fx"]:
    rates = {(r["date"], r["currency"]): Decimal(r["usd_per_unit"]) for r in rows("rates/fx_rates.csv")}


def in_usd(amount, currency, day):
    return amount if currency == "USD" else to_cent(amount * rates[(day, currency)])


def workbook_lines(path):
    """The card statement's lines straight from the sheet XML (inline or shared strings)."""
    with zipfile.ZipFile(path) as book:
        shared = []
        if "xl/sharedStrings.xml" in book.namelist():
            shared = ["".join(t.text or "" for t in si.iter(MAIN + "t"))
                      for si in ET.fromstring(book.read("xl/sharedStrings.xml")).iter(MAIN + "si")]
        sheet = ET.fromstring(book.read("xl/worksheets/sheet1.xml"))
    table = []
    for row in sheet.iter(MAIN + "row"):
        cells = {}
        for cell in row.iter(MAIN + "c"):
            column = re.match(r"[A-Z]+", cell.get("r")).group()
            kind, value = cell.get("t"), cell.find(MAIN + "v")
            if kind == "s":
                cells[column] = shared[int(value.text)]
            elif kind == "inlineStr":
                cells[column] = "".join(t.text or "" for t in cell.iter(MAIN + "t"))
            elif value is not None:
                cells[column] = value.text
        table.append(cells)
    start = next(i for i, cells in enumerate(table) if cells.get("A") == "Reference")
    out = []
    for cells in table[start + 1:]:
        if not cells.get("A"):
            continue
        day = datetime.date(1899, 12, 30) + datetime.timedelta(days=int(float(cells["B"])))
        out.append({"id": cells["A"].strip(), "date": day.isoformat(), "description": cells["C"], "account": "Card",
                    "amount": to_cent(Decimal(cells["D"]))})
    return out


def statement_lines(path):
    out = []
    for r in rows(path):
        amount = parse_amount(r["amount"]) if "amount" in r else parse_amount(r["credit"]) - parse_amount(r["debit"])
        out.append({"id": r["bank_id"], "date": r["date"], "description": r["description"], "account": "Operating",
                    "amount": amount})
    return out


lines = []
for path in TASK["statements"]:
    lines += workbook_lines(path) if path.endswith(".xlsx") else statement_lines(path)
seen, duplicates, postings = set(), [], []
for line in lines:
    key = (line["account"], line["date"], line["description"], line["amount"])
    (duplicates if key in seen else postings).append(line)
    seen.add(key)

entries = rows("ledger/general_ledger.csv")
for e in entries:
    e["usd"] = in_usd(parse_amount(e["amount"]), e["currency"], e["date"])


def day(text):
    return datetime.date.fromisoformat(text)


# for each bank line in date order, the closest unused entry (amount first, then date)
matched, taken = [], set()
for line in sorted(postings, key=lambda b: (b["date"], b["id"])):
    options = [(abs(line["amount"] - e["usd"]), abs((day(line["date"]) - day(e["date"])).days), e["entry_id"], e)
               for e in entries if e["account"] == line["account"] and e["entry_id"] not in taken]
    options = [o for o in options if o[0] <= TOLERANCE and o[1] <= WINDOW]
    if options:
        best = min(options, key=lambda o: o[:3])[3]
        taken.add(best["entry_id"])
        matched.append((best, line))
matched_lines = {b["id"] for _, b in matched}
left_entries = [e for e in entries if e["entry_id"] not in taken]
left_lines = [b for b in postings if b["id"] not in matched_lines]
adjustments = [{"ledger_id": e["entry_id"], "bank_id": b["id"], "difference": str(b["amount"] - e["usd"])}
               for e, b in matched if b["amount"] != e["usd"]]

claims = sorted(rows("expenses/claims.csv"), key=lambda c: c["claim_id"])
violations, earlier = [], set()
for c in claims:
    c["usd"] = in_usd(parse_amount(c["amount"]), c["currency"], c["date"])
    receipt = c["receipt"].strip()
    if c["usd"] > threshold and not (receipt and os.path.exists(os.path.join("expenses", "receipts", receipt + ".txt"))):
        violations.append({"claim_id": c["claim_id"], "rule": "missing_receipt"})
    if c["usd"] > limits[c["category"]]:
        violations.append({"claim_id": c["claim_id"], "rule": "over_limit"})
    signature = (c["employee"], c["date"], c["category"], c["amount"], c["currency"])
    if signature in earlier:
        violations.append({"claim_id": c["claim_id"], "rule": "duplicate_claim"})
    earlier.add(signature)
broken = {v["claim_id"] for v in violations}

first, last = TASK["quarter"]
weighted, won, won_count, lost_count = {}, Decimal(0), 0, 0
for deal in rows("crm/pipeline.csv"):
    if not first <= deal["close_date"] <= last:
        continue
    stage, amount = " ".join(deal["stage"].split()).lower(), Decimal(deal["amount"])
    if stage in stages:
        weighted[deal["owner"]] = weighted.get(deal["owner"], Decimal(0)) + amount * stages[stage] / 100
    elif stage == "closed won":
        won, won_count = won + amount, won_count + 1
    elif stage == "closed lost":
        lost_count += 1


def number(value):
    return json.loads(str(value))


metrics = {
    "matched_count": len(matched),
    "unmatched_ledger_total": number(sum((e["usd"] for e in left_entries), Decimal(0))),
    "unmatched_bank_total": number(sum((b["amount"] for b in left_lines), Decimal(0))),
    "adjustments_total": number(sum((Decimal(a["difference"]) for a in adjustments), Decimal(0))),
    "claims_total": number(sum((c["usd"] for c in claims), Decimal(0))),
    "approved_claims_total": number(sum((c["usd"] for c in claims if c["claim_id"] not in broken), Decimal(0))),
    "weighted_pipeline": number(to_cent(sum(weighted.values(), Decimal(0)))),
    "weighted_by_owner": {k: number(to_cent(v)) for k, v in weighted.items()},
    "closed_won_total": number(won),
    "win_rate": number((Decimal(won_count) / (won_count + lost_count)).quantize(Decimal("0.0001"), ROUND_HALF_UP)),
}
for a in adjustments:
    a["difference"] = number(a["difference"])
os.makedirs("out", exist_ok=True)
results = {
    "reconciliation": {"matched": [{"ledger_id": e["entry_id"], "bank_id": b["id"]} for e, b in matched],
                       "unmatched_ledger": [e["entry_id"] for e in left_entries],
                       "unmatched_bank": [b["id"] for b in left_lines],
                       "duplicate_bank": [b["id"] for b in duplicates], "adjustments": adjustments},
    "policy": {"violations": violations},
    "metrics": metrics,
}
for name, value in results.items():
    with open(os.path.join("out", name + ".json"), "w", encoding="utf-8") as handle:
        json.dump(value, handle)
