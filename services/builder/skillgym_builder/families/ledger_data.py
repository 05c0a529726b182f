"""The books of a ledger-reconcile instance: a general ledger and the bank statements it must be
reconciled with, with planted pairs (date lags, bank fees within the tolerance), entries and
lines on one side only, near misses just outside the tolerance, duplicate postings and foreign
currency entries converted with a daily rate table. Every amount is a Decimal to the cent."""

from __future__ import annotations

import csv
import datetime
import io
import random
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
TOLERANCE = Decimal("1.50")  # largest amount difference a pair may have
WINDOW = 4  # largest date gap (days) a pair may have
FOREIGN = {"EUR": Decimal("1.08"), "GBP": Decimal("1.27")}
VENDORS = ["Acme Supply", "Northwind Traders", "Globex Logistics", "Initech Software", "Umbrella Facilities",
           "Stark Components", "Wayne Freight", "Hooli Cloud", "Vandelay Imports", "Soylent Catering",
           "Pied Piper Hosting", "Cyberdyne Tools", "Tyrell Leasing", "Wonka Office"]
CUSTOMERS = ["Blue Harbor LLC", "Maple & Finch", "Orbit Retail", "Juniper Clinics", "Quartz Media",
             "Redwood Partners", "Summit Dental", "Lumen Schools", "Harbor Foods", "Kestrel Labs"]
CARD_MERCHANTS = ["Airline Booking", "Hotel Central", "Cloud Storage Plan", "Conference Pass", "Rideshare",
                  "Office Depot Online", "Team Lunch Bistro", "Parking Garage"]
BANK_ONLY = [("MONTHLY SERVICE FEE", -45, -5), ("WIRE TRANSFER FEE", -35, -10), ("INTEREST PAID", 1, 40),
             ("RETURNED ITEM CHARGE", -30, -12)]


def cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def money(rng: random.Random, low: float, high: float) -> Decimal:
    return (Decimal(rng.randint(round(low * 100), round(high * 100))) / 100).quantize(CENT)


@dataclass
class Entry:
    """A general-ledger entry; ``usd`` is its amount in the base currency."""

    id: str
    date: datetime.date
    account: str
    description: str
    counterparty: str
    amount: Decimal
    currency: str
    usd: Decimal


@dataclass
class Line:
    id: str
    date: datetime.date
    account: str
    description: str
    amount: Decimal
    duplicate_of: str | None = None


@dataclass
class Books:
    period: tuple[int, int]  # (year, month)
    accounts: list[str]
    entries: list[Entry]
    lines: list[Line]
    pairs: list[tuple[str, str]]  # (entry id, line id)
    rates: dict[tuple[datetime.date, str], Decimal]
    prior_lines: list[Line] = field(default_factory=list)  # last period's statement (a decoy)

    def expected(self) -> dict[str, object]:
        entries = {e.id: e for e in self.entries}
        lines = {line.id: line for line in self.lines}
        paired_entries = {e for e, _ in self.pairs}
        paired_lines = {b for _, b in self.pairs}
        duplicates = sorted(line.id for line in self.lines if line.duplicate_of)
        unmatched_ledger = sorted(e.id for e in self.entries if e.id not in paired_entries)
        unmatched_bank = sorted(b.id for b in self.lines if b.id not in paired_lines and not b.duplicate_of)
        adjustments = [{"ledger_id": e, "bank_id": b, "difference": str(lines[b].amount - entries[e].usd)}
                       for e, b in sorted(self.pairs) if lines[b].amount != entries[e].usd]
        return {
            "matched": [{"ledger_id": e, "bank_id": b} for e, b in sorted(self.pairs)],
            "unmatched_ledger": unmatched_ledger,
            "unmatched_bank": unmatched_bank,
            "duplicate_bank": duplicates,
            "adjustments": adjustments,
            "metrics": {
                "matched_count": len(self.pairs),
                "unmatched_ledger_total": str(sum((entries[e].usd for e in unmatched_ledger), Decimal(0))),
                "unmatched_bank_total": str(sum((lines[b].amount for b in unmatched_bank), Decimal(0))),
                "adjustments_total": str(sum((Decimal(a["difference"]) for a in adjustments), Decimal(0))),
            },
        }


def daily_rates(rng: random.Random, start: datetime.date, days: int) -> dict[tuple[datetime.date, str], Decimal]:
    """A random walk per currency, moving at least 0.4% a day so a rate from the wrong day shows."""
    rates = {}
    for currency, base in FOREIGN.items():
        rate = base
        for offset in range(days):
            step = Decimal(str(round(rng.uniform(0.004, 0.012), 4))) * rng.choice((-1, 1))
            rate = (rate * (1 + step)).quantize(Decimal("0.000001"))
            rates[(start + datetime.timedelta(days=offset), currency)] = rate
    return rates


def _candidates(entries: list[Entry], lines: list[Line]) -> set[tuple[str, str]]:
    """Every (entry, line) the matching rule allows, duplicates left out."""
    return {(e.id, b.id) for e in entries for b in lines
            if not b.duplicate_of and e.account == b.account and abs(b.amount - e.usd) <= TOLERANCE
            and abs((b.date - e.date).days) <= WINDOW}


class _Maker:
    def __init__(self, rng: random.Random, knobs: dict[str, float]) -> None:
        self.rng = rng
        self.count = int(knobs["record_count"])
        self.noise = float(knobs["noise_level"])
        self.fx = bool(knobs["multi_step"])
        self.duplicates = bool(knobs["error_recovery"])
        self.accounts = ["Operating", "Card"][: int(knobs["long_horizon"])]
        self.decoys = bool(knobs["distractor_files"])

    def entry(self, index: int, start: datetime.date, rates: dict[tuple[datetime.date, str], Decimal]) -> Entry:
        rng = self.rng
        account = "Card" if "Card" in self.accounts and rng.random() < 0.3 else "Operating"
        day = start + datetime.timedelta(days=rng.randint(0, 27))
        if account == "Card":
            party = rng.choice(CARD_MERCHANTS)
            amount, description = -money(rng, 12, 900), f"Card purchase - {party}"
        elif rng.random() < 0.4:
            party = rng.choice(CUSTOMERS)
            amount, description = money(rng, 300, 12000), f"Customer payment - {party} INV-{rng.randint(1000, 9999)}"
        else:
            party = rng.choice(VENDORS)
            amount, description = -money(rng, 50, 8000), f"Vendor payment - {party} bill {rng.randint(100, 999)}"
        currency = "USD"
        if self.fx and account == "Operating" and index % 3 == 1:
            currency = rng.choice(sorted(FOREIGN))
            amount = money(rng, 1000, 6000) * (1 if amount > 0 else -1)
        usd = amount if currency == "USD" else cents(amount * rates[(day, currency)])
        return Entry(f"tmp-{index}", day, account, description, party, amount, currency, usd)

    def lag(self) -> int:
        if self.rng.random() < self.noise:
            return self.rng.choice([-1, 2, 3, WINDOW])
        return self.rng.randint(0, 1)

    def books(self, year: int, month: int) -> Books:
        rng = self.rng
        start = datetime.date(year, month, 1)
        rates = daily_rates(rng, start, 28) if self.fx else {}
        entries = [self.entry(i, start, rates) for i in range(self.count)]
        lines: list[Line] = []
        pairs: list[tuple[str, str]] = []
        near_misses = max(1, round(self.noise * self.count / 5)) if self.noise else 0
        for index, e in enumerate(entries):
            role = rng.random()
            if index < near_misses:
                if rng.random() < 0.5:
                    gap = (TOLERANCE + money(rng, 0.5, 6)) * rng.choice((-1, 1))
                    lines.append(Line(f"tmp-b{index}", e.date + datetime.timedelta(days=rng.randint(0, 2)),
                                      e.account, _bank_text(rng, e), e.usd + gap))
                else:
                    lines.append(Line(f"tmp-b{index}", e.date + datetime.timedelta(days=WINDOW + rng.randint(1, 3)),
                                      e.account, _bank_text(rng, e), e.usd))
            elif role < 0.85:
                fee = -money(rng, 0.05, float(TOLERANCE)) if rng.random() < self.noise else Decimal(0)
                line = Line(f"tmp-b{index}", e.date + datetime.timedelta(days=self.lag()), e.account,
                            _bank_text(rng, e), e.usd + fee)
                lines.append(line)
                pairs.append((e.id, line.id))
        for index in range(max(2, self.count // 8)):
            text, low, high = rng.choice(BANK_ONLY)
            account = rng.choice(self.accounts)
            lines.append(Line(f"tmp-x{index}", start + datetime.timedelta(days=rng.randint(0, 29)), account,
                              text if account == "Operating" else "CARD ANNUAL FEE", money(rng, low, high)))
        if self.duplicates:
            paired = {b for _, b in pairs}
            for original in rng.sample([b for b in lines if b.id in paired], max(1, self.count // 20)):
                lines.append(Line(f"{original.id}-dup", original.date, original.account, original.description,
                                  original.amount, duplicate_of=original.id))
        entries, lines, pairs = _number(rng, entries, lines, pairs)
        books = Books((year, month), self.accounts, entries, lines, pairs, rates)
        if self.decoys:
            books.prior_lines = self.prior(start, lines)
        return books

    def prior(self, start: datetime.date, lines: list[Line]) -> list[Line]:
        """Last month's operating statement, numbered just before this month's."""
        first = min(int(b.id.split("-")[1]) for b in lines if b.account == "Operating")
        count = max(4, self.count // 4)
        days = sorted(self.rng.randint(1, 27) for _ in range(count))
        previous = start - datetime.timedelta(days=28)
        return [Line(f"BT-{first - count + i:04d}", previous.replace(day=d), "Operating",
                     f"ACH {self.rng.choice(VENDORS).upper()}", -money(self.rng, 50, 5000)) for i, d in enumerate(days)]


def _bank_text(rng: random.Random, e: Entry) -> str:
    if e.account == "Card":
        return f"POS {e.counterparty.upper()} #{rng.randint(1000, 9999)}"
    if e.amount > 0:
        return f"DEPOSIT {e.counterparty.upper()}"
    return f"{rng.choice(['ACH', 'WIRE', 'CHECK'])} {e.counterparty.upper()}"


def _number(rng: random.Random, entries: list[Entry], lines: list[Line],
            pairs: list[tuple[str, str]]) -> tuple[list[Entry], list[Line], list[tuple[str, str]]]:
    """Final ids: ledger entries by date, each statement's lines by date (continuing the bank's
    numbering), a duplicate right after the line it repeats."""
    entries = sorted(entries, key=lambda e: (e.date, e.id))
    names = {e.id: f"GL-{i + 1:04d}" for i, e in enumerate(entries)}
    for e in entries:
        e.id = names[e.id]
    ordered: list[Line] = []
    for account, prefix in (("Operating", "BT"), ("Card", "CC")):
        mine = sorted((b for b in lines if b.account == account and not b.duplicate_of), key=lambda b: (b.date, b.id))
        offset = rng.randint(100, 600) if prefix == "BT" else 0
        for b in mine:
            ordered.append(b)
            ordered += [d for d in lines if d.duplicate_of == b.id]
        for number, b in enumerate((b for b in ordered if b.account == account), start=offset + 1):
            names[b.id] = f"{prefix}-{number:04d}"
    for b in ordered:
        b.id = names[b.id]
        b.duplicate_of = names[b.duplicate_of] if b.duplicate_of else None
    return entries, ordered, [(names[e], names[b]) for e, b in pairs]


def make_books(rng: random.Random, knobs: dict[str, float], year: int, month: int) -> Books:
    """Books whose matching rule allows exactly the planted pairs (redrawn on a chance collision)."""
    for _ in range(200):
        books = _Maker(rng, knobs).books(year, month)
        keys = [(b.account, b.date, b.description, b.amount) for b in books.lines if not b.duplicate_of]
        if _candidates(books.entries, books.lines) == set(books.pairs) and len(set(keys)) == len(keys):
            return books
    raise RuntimeError("could not draw unambiguous books")


def csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode()


def _grouped(amount: Decimal) -> str:
    return f"{abs(amount):,.2f}"


def statement_csv(lines: list[Line], split_columns: bool) -> bytes:
    """An operating-account statement; with ``split_columns`` amounts go to debit/credit columns
    with thousands separators, as many bank exports write them."""
    if not split_columns:
        return csv_bytes(["bank_id", "date", "description", "amount"],
                    [[b.id, b.date.isoformat(), b.description, str(b.amount)] for b in lines])
    return csv_bytes(["bank_id", "date", "description", "debit", "credit"],
                [[b.id, b.date.isoformat(), b.description, _grouped(b.amount) if b.amount < 0 else "",
                  _grouped(b.amount) if b.amount >= 0 else ""] for b in lines])


def book_files(books: Books, split_columns: bool) -> dict[str, bytes]:
    """The ledger, the operating statement, the rate table and (a decoy) last month's statement."""
    files = {
        "ledger/general_ledger.csv": csv_bytes(
            ["entry_id", "date", "account", "description", "counterparty", "amount", "currency"],
            [[e.id, e.date.isoformat(), e.account, e.description, e.counterparty, str(e.amount), e.currency]
             for e in books.entries]),
        "bank/operating_statement.csv": statement_csv([b for b in books.lines if b.account == "Operating"],
                                                      split_columns),
    }
    if books.rates:
        files["rates/fx_rates.csv"] = csv_bytes(["date", "currency", "usd_per_unit"],
                                           [[d.isoformat(), c, str(r)] for (d, c), r in sorted(books.rates.items())])
    if books.prior_lines:
        files["bank/archive/operating_statement_prior_month.csv"] = statement_csv(books.prior_lines, split_columns)
    return files


def card_rows(books: Books) -> list[list[str]]:
    """The card statement's rows for the workbook: reference, ISO date, merchant, amount."""
    return [[b.id, b.date.isoformat(), b.description, str(b.amount)] for b in books.lines if b.account == "Card"]
