"""Expense claims with receipts and a CRM pipeline export for a ledger-reconcile instance, with
planted policy violations (over a category limit, a missing receipt above the threshold, a claim
submitted twice) and the quarter's weighted pipeline, won revenue and win rate."""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from skillgym_builder.families.ledger_data import FOREIGN, cents, csv_bytes, money

DEFAULT_LIMITS = {"Meals": Decimal("75"), "Lodging": Decimal("250"), "Transportation": Decimal("120"),
                  "Office supplies": Decimal("150")}
DEFAULT_RECEIPT_THRESHOLD = Decimal("75")
DEFAULT_STAGES = {"Prospecting": Decimal("10"), "Qualification": Decimal("25"), "Proposal": Decimal("50"),
                  "Negotiation": Decimal("75")}
WON, LOST = "Closed Won", "Closed Lost"
EMPLOYEES = ["Dana Whitfield", "Arjun Mehta", "Lucia Ferraro", "Kwame Boateng", "Ingrid Solberg", "Mei Takahashi"]
OWNERS = ["Priya Nair", "Tom Becker", "Sofia Alvarez", "Jonas Berg", "Chen Wei"]
ACCOUNTS = ["Atlas Mining", "Brightline Bank", "Cobalt Health", "Delta Outfitters", "Evergreen Foods", "Fjord Energy",
            "Granite Insurance", "Helix Biotech", "Ion Robotics", "Jade Hotels", "Keystone Legal", "Lattice Labs"]
DESCRIPTIONS = {"meal": "Client dinner", "lodg": "Hotel night", "hotel": "Hotel night", "transport": "Taxi to client site",
                "travel": "Train ticket", "office": "Printer toner", "software": "Design tool subscription"}


@dataclass
class Claim:
    id: str
    employee: str
    date: datetime.date
    category: str
    description: str
    amount: Decimal
    currency: str
    usd: Decimal
    receipt: str  # receipt id written in the claim ("" when none)
    receipt_on_file: bool
    duplicate: bool = False


def _description(category: str) -> str:
    lowered = category.lower()
    return next((text for key, text in DESCRIPTIONS.items() if key in lowered), f"{category} purchase")


def _targets(rng: random.Random, limits: dict[str, Decimal], threshold: Decimal) -> list[tuple[str, Decimal, bool]]:
    """(category, USD amount, receipt on file) for the claims that make the rules matter: just above
    and just below the receipt threshold without a receipt, just above and below a limit with one."""
    low_limit = [c for c, limit in limits.items() if limit > threshold * Decimal("1.4")] or sorted(limits)
    category = rng.choice(sorted(low_limit))
    over = rng.choice(sorted(limits))
    return [
        (category, cents(threshold * Decimal(str(rng.uniform(1.05, 1.3)))), False),
        (category, cents(threshold * Decimal(str(rng.uniform(0.6, 0.95)))), False),
        (over, cents(limits[over] * Decimal(str(rng.uniform(1.05, 1.4)))), True),
        (over, cents(limits[over] * Decimal(str(rng.uniform(0.8, 0.97)))), True),
    ]


def make_claims(rng: random.Random, count: int, limits: dict[str, Decimal], threshold: Decimal, start: datetime.date,
                rates: dict[tuple[datetime.date, str], Decimal], duplicate: bool) -> list[Claim]:
    planned = _targets(rng, limits, threshold)
    while len(planned) < count:
        category = rng.choice(sorted(limits))
        planned.append((category, cents(limits[category] * Decimal(str(rng.uniform(0.2, 1.2)))), rng.random() < 0.8))
    claims = []
    for index, (category, usd, on_file) in enumerate(planned):
        day = start + datetime.timedelta(days=rng.randint(0, 27))
        amount, currency = usd, "USD"
        if rates and (index == 4 or (index > 4 and rng.random() < 0.35)):
            currency = rng.choice(sorted(FOREIGN))
            amount = cents(usd / rates[(day, currency)])
            usd = cents(amount * rates[(day, currency)])
        receipt = f"RC-{rng.randint(10000, 99999)}" if on_file or rng.random() < 0.5 else ""
        claims.append(Claim(f"tmp-{index}", rng.choice(EMPLOYEES), day, category, _description(category), amount,
                            currency, usd, receipt, on_file))
    if duplicate:
        original = rng.choice(claims[4:] or claims)
        claims.append(Claim(f"{original.id}-dup", original.employee, original.date, original.category,
                            original.description, original.amount, original.currency, original.usd, original.receipt,
                            original.receipt_on_file, duplicate=True))
    claims.sort(key=lambda c: (c.date, c.duplicate, c.id))
    offset = rng.randint(200, 800)
    for number, claim in enumerate(claims, start=offset):
        claim.id = f"EX-{number:04d}"
    return claims


def violations(claims: list[Claim], limits: dict[str, Decimal], threshold: Decimal) -> list[tuple[str, str]]:
    found = []
    for claim in claims:
        if claim.usd > threshold and not claim.receipt_on_file:
            found.append((claim.id, "missing_receipt"))
        if claim.usd > limits[claim.category]:
            found.append((claim.id, "over_limit"))
        if claim.duplicate:
            found.append((claim.id, "duplicate_claim"))
    return sorted(found)


def claim_files(claims: list[Claim], rng: random.Random) -> dict[str, bytes]:
    files = {"expenses/claims.csv": csv_bytes(
        ["claim_id", "employee", "date", "category", "description", "amount", "currency", "receipt"],
        [[c.id, c.employee, c.date.isoformat(), c.category, c.description, str(c.amount), c.currency, c.receipt]
         for c in claims])}
    for claim in claims:
        if claim.receipt and claim.receipt_on_file:
            files[f"expenses/receipts/{claim.receipt}.txt"] = (
                f"RECEIPT {claim.receipt}\nMerchant: {rng.choice(ACCOUNTS)}\nDate: {claim.date.isoformat()}\n"
                f"Total: {claim.amount} {claim.currency}\n").encode()
    return files


@dataclass
class Deal:
    id: str
    account: str
    owner: str
    stage: str
    stage_text: str  # as exported (case and spacing may differ)
    amount: Decimal
    close_date: datetime.date


def quarter_of(year: int, month: int) -> tuple[datetime.date, datetime.date]:
    first = datetime.date(year, 3 * ((month - 1) // 3) + 1, 1)
    after = datetime.date(year + (first.month == 10), (first.month + 2) % 12 + 1, 1)
    return first, after - datetime.timedelta(days=1)


def make_deals(rng: random.Random, count: int, stages: dict[str, Decimal], quarter: tuple[datetime.date, datetime.date],
               noise: float) -> list[Deal]:
    first, last = quarter
    names = [*sorted(stages), WON, LOST]
    planned = [(WON, True), (LOST, True), (sorted(stages)[0], True), (sorted(stages)[-1], True)]
    planned += [(rng.choice(names), rng.random() < 0.75) for _ in range(count - len(planned))]
    deals = []
    for stage, inside in planned:
        if inside:
            close = first + datetime.timedelta(days=rng.randint(0, (last - first).days))
        else:
            close = rng.choice([first - datetime.timedelta(days=rng.randint(1, 60)),
                                last + datetime.timedelta(days=rng.randint(1, 60))])
        text = stage
        if rng.random() < noise:
            text = rng.choice([stage.upper(), stage.lower(), f" {stage} ", f"{stage}  "])
        deals.append(Deal("", rng.choice(ACCOUNTS), rng.choice(OWNERS), stage, text,
                          money(rng, 2000, 90000), close))
    rng.shuffle(deals)
    for number, deal in enumerate(deals, start=rng.randint(1000, 5000)):
        deal.id = f"D-{number}"
    return deals


def pipeline_expected(deals: list[Deal], stages: dict[str, Decimal], quarter: tuple[datetime.date, datetime.date]
                      ) -> dict[str, object]:
    first, last = quarter
    inside = [d for d in deals if first <= d.close_date <= last]
    by_owner: dict[str, Decimal] = {}
    for deal in inside:
        if deal.stage in stages:
            by_owner[deal.owner] = by_owner.get(deal.owner, Decimal(0)) + deal.amount * stages[deal.stage] / 100
    won = [d for d in inside if d.stage == WON]
    lost = [d for d in inside if d.stage == LOST]
    rate = (Decimal(len(won)) / Decimal(len(won) + len(lost))).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    return {"weighted_pipeline": str(cents(sum(by_owner.values(), Decimal(0)))),
            "weighted_by_owner": {owner: str(cents(value)) for owner, value in sorted(by_owner.items())},
            "closed_won_total": str(sum((d.amount for d in won), Decimal(0))), "win_rate": str(rate)}


def deal_file(deals: list[Deal]) -> bytes:
    return csv_bytes(["deal_id", "account", "owner", "stage", "amount", "close_date"],
                [[d.id, d.account, d.owner, d.stage_text, str(d.amount), d.close_date.isoformat()] for d in deals])
