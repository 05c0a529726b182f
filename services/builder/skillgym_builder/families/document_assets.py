"""The documents of a document-extract instance: one kind of business document per instance
(invoices, account statements or delivery reports), each with labelled header fields, an item
table that runs over pages with its header repeated, a printed total and metadata. Decides what
every page shows (render parameters) and what a correct extraction holds (expected values);
the render script only lays it out with reportlab or python-docx."""

from __future__ import annotations

import datetime
import random
import re
from dataclasses import dataclass
from typing import Any

from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard

FIRST_PAGE_ROWS, PAGE_ROWS = 18, 34  # table rows the render script puts on the first and on later pages
ISO = "%Y-%m-%d"
DISPLAY_DATES = ("%d %b %Y", "%Y-%m-%d", "%B %d, %Y")  # unambiguous ways documents print a date
ISSUERS = ["Northwind Traders Ltd", "Halvorsen & Pike GmbH", "Bluefin Logistics Inc", "Corrado Office Supply",
           "Ashgrove Utilities plc", "Keystone Components BV"]
PEOPLE = ["Mara Lindqvist", "Tobias Ekwueme", "Priya Raman", "Jonah Castellanos", "Aiko Brandt", "Ruth Okafor"]
CUSTOMERS = ["Redwood Dental Clinic", "Polar Bay Hotels", "Ostrander Architects", "Greenline Bakery Co",
             "Vantage Robotics Lab", "Marlowe Public Library"]
GOODS = ["Thermal paper rolls", "Stainless hinge set", "LED panel 60x60", "Ethernet patch cable 2m",
         "Archive box A4", "Nitrile gloves (box)", "Label printer ribbon", "Cordless drill battery",
         "Whiteboard markers", "Cable ties 300mm", "Desk lamp base", "Floor mat anti-slip"]
PAYEES = ["Card payment - fuel", "Transfer to savings", "Direct debit - insurance", "Incoming wire",
          "Supplier refund", "Bank fee", "Card payment - travel", "Payroll batch", "Interest credit"]
CITIES = ["Rotterdam", "Lyon", "Gdansk", "Porto", "Aarhus", "Brno", "Leipzig", "Tallinn", "Bologna"]


@dataclass(frozen=True)
class Column:
    label: str  # header text printed in the document
    key: str  # key in the output
    kind: str  # code | text | int | money | date


@dataclass(frozen=True)
class Kind:
    name: str
    heading: str
    fields: tuple[tuple[str, str, str], ...]  # (label, key, kind)
    columns: tuple[Column, ...]
    total_label: str
    total_of: str  # money column the printed total sums


KINDS = {
    "invoice": Kind("invoice", "INVOICE",
                    (("Invoice No.", "invoice_number", "code"), ("Issue date", "issue_date", "date"),
                     ("Due date", "due_date", "date"), ("Bill to", "customer", "text")),
                    (Column("SKU", "sku", "code"), Column("Description", "description", "text"),
                     Column("Qty", "quantity", "int"), Column("Unit price", "unit_price", "money"),
                     Column("Amount", "amount", "money")), "Total due", "amount"),
    "statement": Kind("statement", "ACCOUNT STATEMENT",
                      (("Account No.", "account_number", "code"), ("Statement date", "statement_date", "date"),
                       ("Account holder", "holder", "text")),
                      (Column("Date", "date", "date"), Column("Reference", "reference", "code"),
                       Column("Description", "description", "text"), Column("Amount", "amount", "money")),
                      "Net movement", "amount"),
    "delivery": Kind("delivery", "DELIVERY REPORT",
                     (("Report ID", "report_id", "code"), ("Report date", "report_date", "date"),
                      ("Depot", "depot", "text")),
                     (Column("Date", "date", "date"), Column("Order", "order", "code"),
                      Column("Destination", "destination", "text"), Column("Parcels", "parcels", "int"),
                      Column("Charge", "charge", "money")), "Total charges", "charge"),
}


def pages_for(rows: int) -> int:
    return 1 + -(-max(0, rows - FIRST_PAGE_ROWS) // PAGE_ROWS)


def show_money(value: float, noise: float, rng: random.Random) -> str:
    text = f"{abs(value):,.2f}"
    if noise and rng.random() < noise:
        return f"({text})" if value < 0 else f"${text}"
    return f"-{text}" if value < 0 else text


def show_date(day: datetime.date, noise: float, rng: random.Random) -> str:
    pattern = rng.choice(DISPLAY_DATES) if noise >= 1 else DISPLAY_DATES[0]
    return day.strftime(pattern)


def _row(kind: Kind, rng: random.Random, day: datetime.date, index: int) -> dict[str, Any]:
    if kind.name == "invoice":
        quantity, price = rng.randint(1, 40), round(rng.uniform(1.5, 480), 2)
        return {"sku": f"SK-{rng.randint(1000, 9999)}-{index % 10}", "description": rng.choice(GOODS),
                "quantity": quantity, "unit_price": price, "amount": round(quantity * price, 2)}
    if kind.name == "statement":
        sign = 1 if rng.random() < 0.35 else -1
        return {"date": day, "reference": f"TX{rng.randint(100000, 999999)}", "description": rng.choice(PAYEES),
                "amount": round(sign * rng.uniform(3, 2600), 2)}
    return {"date": day, "order": f"ORD-{rng.randint(10000, 99999)}", "destination": rng.choice(CITIES),
            "parcels": rng.randint(1, 24), "charge": round(rng.uniform(8, 900), 2)}


def document(kind: Kind, rng: random.Random, path: str, rows: int, noise: float, out_format: str,
             stamp: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(render parameters, expected extraction) of one document; dates in the expected values
    are written with ``out_format`` (a strftime pattern)."""
    issued = datetime.date(2025, rng.randint(1, 10), rng.randint(1, 28))
    values: dict[str, Any] = {}
    for label, key, field_kind in kind.fields:
        if field_kind == "date":
            values[key] = issued + datetime.timedelta(days=30 if key == "due_date" else 0)
        elif field_kind == "code":
            values[key] = f"{label[:3].upper().rstrip('.')}-{issued.year}-{rng.randint(100, 9999):04d}"
        else:
            values[key] = rng.choice(CUSTOMERS if kind.name != "delivery" else CITIES)
    start = issued - datetime.timedelta(days=40)
    days = sorted(start + datetime.timedelta(days=rng.randint(0, 39)) for _ in range(rows))
    items = [_row(kind, rng, day, i) for i, day in enumerate(days)]
    issuer = rng.choice(ISSUERS)
    title = f"{issuer} - {kind.heading.title()} {values[kind.fields[0][1]]}"

    def shown(value: Any, value_kind: str) -> str:
        if value_kind == "date":
            return show_date(value, noise, rng)
        if value_kind == "money":
            return show_money(value, noise, rng)
        return str(value)

    def wanted(value: Any, value_kind: str) -> Any:
        return value.strftime(out_format) if value_kind == "date" else value

    total = round(sum(item[kind.total_of] for item in items), 2)
    count = pages_for(rows)
    params = {
        "file": path, "format": "docx" if path.endswith(".docx") else "pdf", "title": title,
        "author": rng.choice(PEOPLE), "heading": kind.heading, "issuer": issuer, "stamp": stamp,
        "fields": [[label, shown(values[key], k)] for label, key, k in kind.fields],
        "header": [c.label for c in kind.columns], "money": [c.kind == "money" for c in kind.columns],
        "rows": [[shown(item[c.key], c.kind) for c in kind.columns] for item in items],
        "total": f"{kind.total_label}: {show_money(total, noise, rng)}",
        "first_page_rows": FIRST_PAGE_ROWS, "page_rows": PAGE_ROWS,
        "running": {"header": f"{issuer} | {kind.heading.title()} | Confidential", "pages": count} if noise else None,
    }
    expected = {
        "title": title, "author": params["author"], "pages": count if params["format"] == "pdf" else None,
        "fields": {key: wanted(values[key], k) for _, key, k in kind.fields},
        "rows": [{c.key: wanted(item[c.key], c.kind) for c in kind.columns} for item in items],
        "total": total,
    }
    return params, expected


# -- the skill's output convention for dates ---------------------------------------------------

DATE_PATTERN = re.compile(r"`((?:YYYY|MM|DD)(?:[-./ ]?(?:YYYY|MM|DD)){2})`")
DATE_CUE = re.compile(r"\bdates?\b", re.I)
OUTPUT_CUE = re.compile(r"\b(writ\w*|output|record\w*|emit\w*|export\w*|store\w*|format\w*)\b", re.I)


def strftime_of(pattern: str) -> str | None:
    """``DD.MM.YYYY`` as ``%d.%m.%Y``; None unless each of YYYY, MM and DD occurs once."""
    tokens = re.findall(r"YYYY|MM|DD", pattern)
    if sorted(tokens) != ["DD", "MM", "YYYY"]:
        return None
    return pattern.replace("YYYY", "%Y").replace("MM", "%m").replace("DD", "%d")


def date_convention(card: SkillCard) -> Fact | None:
    """The date format the skill prescribes for extracted data, as a strftime pattern."""
    for number, raw in body_lines(card.skill_md):
        match = DATE_PATTERN.search(raw)
        if match and DATE_CUE.search(raw) and OUTPUT_CUE.search(raw):
            pattern = strftime_of(match.group(1))
            if pattern:
                return Fact(pattern, number)
    return None
