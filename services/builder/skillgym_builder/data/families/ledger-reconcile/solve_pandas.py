# --- closing the month with pandas: reconciliation, expense policy, pipeline metrics ---
import json
import os
import sys
from decimal import ROUND_HALF_UP, Decimal

import pandas as pd
from ledgerfacts import category_limits, receipt_threshold, stage_probabilities

TASK = json.loads(sys.argv[1])
CENT = Decimal("0.01")
TOLERANCE, WINDOW = Decimal(TASK["tolerance"]), int(TASK["window"])


def cents(value):
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def dec(text):
    return Decimal(str(text).replace(",", "").strip() or "0")


def rule(name, reader):
    """A policy figure: from the skill where the instruction says so, else as the instruction gives it."""
    if name in TASK["from_skill"]:
        value = reader()
        if value is None:
            raise SystemExit(f"the skill does not state {name}")
        return value
    raw = TASK["rules"][name]
    return {k: Decimal(v) for k, v in raw.items()} if isinstance(raw, dict) else Decimal(raw)


THRESHOLD = rule("receipt_threshold", receipt_threshold)
LIMITS = rule("category_limits", category_limits)
STAGES = {k.casefold(): v for k, v in rule("stage_probabilities", stage_probabilities).items()}
RATES = {}
if TASK["fx"]:
    table = pd.read_csv("rates/fx_rates.csv", dtype=str)
    RATES = {(r.date, r.currency): Decimal(r.usd_per_unit) for r in table.itertuples()}


def usd(amount, currency, day):
    return amount if currency == "USD" else cents(amount * RATES[(day, currency)])


def read_table(path):
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def operating_statement(path):
    frame = read_table(path)
    if "amount" in frame:
        amounts = [dec(a) for a in frame["amount"]]
    else:
        amounts = [dec(c) - dec(d) for d, c in zip(frame["debit"], frame["credit"], strict=True)]
    return pd.DataFrame({"bank_id": frame["bank_id"], "date": frame["date"], "description": frame["description"],
                         "amount": amounts, "account": "Operating"})


def card_statement(path):
    raw = pd.read_excel(path, sheet_name="Transactions", header=None)
    top = raw.index[raw[0].astype(str).str.strip() == "Reference"][0]
    rows = raw.iloc[top + 1:].dropna(subset=[0])
    return pd.DataFrame({"bank_id": rows[0].astype(str).str.strip(),
                         "date": pd.to_datetime(rows[1]).dt.date.astype(str),
                         "description": rows[2].astype(str), "amount": [dec(round(float(a), 2)) for a in rows[3]],
                         "account": "Card"})


ledger = read_table("ledger/general_ledger.csv")
ledger["usd"] = [usd(dec(a), c, d) for a, c, d in zip(ledger["amount"], ledger["currency"], ledger["date"], strict=True)]
bank = pd.concat([card_statement(p) if p.endswith(".xlsx") else operating_statement(p) for p in TASK["statements"]],
                 ignore_index=True)
bank["key"] = bank["amount"].astype(str)
bank["duplicate"] = bank.duplicated(subset=["account", "date", "description", "key"], keep="first")
postings = bank[~bank["duplicate"]]

pairs = ledger.merge(postings, on="account", suffixes=("_gl", "_bank"))
pairs["gap"] = (pd.to_datetime(pairs["date_bank"]) - pd.to_datetime(pairs["date_gl"])).dt.days.abs()
pairs["difference"] = [b - g for b, g in zip(pairs["amount_bank"], pairs["usd"], strict=True)]
within = pd.Series([abs(d) <= TOLERANCE for d in pairs["difference"]], index=pairs.index, dtype=bool)
pairs = pairs[within & (pairs["gap"] <= WINDOW)].copy()
pairs["size"] = [float(abs(d)) for d in pairs["difference"]]
pairs = pairs.sort_values(["size", "gap", "entry_id", "bank_id"])
used_gl, used_bank, matched = set(), set(), []
for row in pairs.itertuples():
    if row.entry_id not in used_gl and row.bank_id not in used_bank:
        used_gl.add(row.entry_id)
        used_bank.add(row.bank_id)
        matched.append(row)

unmatched_gl = ledger[~ledger["entry_id"].isin(used_gl)]
unmatched_bank = postings[~postings["bank_id"].isin(used_bank)]
adjustments = [{"ledger_id": r.entry_id, "bank_id": r.bank_id, "difference": float(r.difference)}
               for r in matched if r.difference != 0]
reconciliation = {
    "matched": [{"ledger_id": r.entry_id, "bank_id": r.bank_id} for r in matched],
    "unmatched_ledger": sorted(unmatched_gl["entry_id"]),
    "unmatched_bank": sorted(unmatched_bank["bank_id"]),
    "duplicate_bank": sorted(bank.loc[bank["duplicate"], "bank_id"]),
    "adjustments": adjustments,
}

claims = read_table("expenses/claims.csv").sort_values("claim_id")
claims["usd"] = [usd(dec(a), c, d) for a, c, d in zip(claims["amount"], claims["currency"], claims["date"], strict=True)]
claims["on_file"] = [bool(r) and os.path.isfile(f"expenses/receipts/{r}.txt") for r in claims["receipt"]]
claims["repeat"] = claims.duplicated(subset=["employee", "date", "category", "amount", "currency"], keep="first")
violations = []
for c in claims.itertuples():
    if c.usd > THRESHOLD and not c.on_file:
        violations.append({"claim_id": c.claim_id, "rule": "missing_receipt"})
    if c.usd > LIMITS[c.category]:
        violations.append({"claim_id": c.claim_id, "rule": "over_limit"})
    if c.repeat:
        violations.append({"claim_id": c.claim_id, "rule": "duplicate_claim"})
flagged = {v["claim_id"] for v in violations}

deals = read_table("crm/pipeline.csv")
deals["stage_key"] = deals["stage"].str.strip().str.casefold()
first, last = TASK["quarter"]
quarter = deals[(deals["close_date"] >= first) & (deals["close_date"] <= last)].copy()
open_deals = quarter[quarter["stage_key"].isin(STAGES)].copy()
open_deals["weighted"] = [dec(a) * STAGES[s] / 100 for a, s in zip(open_deals["amount"], open_deals["stage_key"], strict=True)]
by_owner = {}
for owner, value in zip(open_deals["owner"], open_deals["weighted"], strict=True):
    by_owner[owner] = by_owner.get(owner, Decimal(0)) + value
won = quarter[quarter["stage_key"] == "closed won"]
lost = quarter[quarter["stage_key"] == "closed lost"]

metrics = {
    "matched_count": len(matched),
    "unmatched_ledger_total": float(sum(unmatched_gl["usd"], Decimal(0))),
    "unmatched_bank_total": float(sum(unmatched_bank["amount"], Decimal(0))),
    "adjustments_total": float(sum((Decimal(str(a["difference"])) for a in adjustments), Decimal(0))),
    "claims_total": float(sum(claims["usd"], Decimal(0))),
    "approved_claims_total": float(sum(claims.loc[~claims["claim_id"].isin(flagged), "usd"], Decimal(0))),
    "weighted_pipeline": float(cents(sum(by_owner.values(), Decimal(0)))),
    "weighted_by_owner": {owner: float(cents(value)) for owner, value in sorted(by_owner.items())},
    "closed_won_total": float(sum((dec(a) for a in won["amount"]), Decimal(0))),
    "win_rate": float((Decimal(len(won)) / (len(won) + len(lost))).quantize(Decimal("0.0001"), ROUND_HALF_UP)),
}
os.makedirs("out", exist_ok=True)
for name, value in (("reconciliation", reconciliation), ("policy", {"violations": violations}), ("metrics", metrics)):
    with open(f"out/{name}.json", "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2)
print({k: len(v) for k, v in reconciliation.items()}, len(violations), "violations")
