"""Verifier for ledger-reconcile: the reconciliation (pairs, unmatched sides, duplicates and
adjustments as multisets), the policy violations and the metrics against the values computed
with Decimal when the inputs were generated; money to the cent, weighted figures within $0.01."""

import json
import os
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, load_expected, number, run, share

E = load_expected()
MAX_BYTES = 4 * 1024 * 1024
CENT = Decimal("0.005")  # amounts written to the cent
WEIGHTED = Decimal("0.01")  # products with probabilities, rounded once at the end


def output(rel):
    """The agent's JSON object, read with a size bound and without following a link."""
    fd = os.open(app_path(rel), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{rel} is larger than {MAX_BYTES} bytes")
    value = json.loads(data.decode("utf-8"))
    if not isinstance(value, dict):
        raise TypeError(f"{rel} must hold a JSON object")
    return value


def text(value):
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value.strip()


def money_close(got, want, tolerance=CENT):
    return abs(Decimal(repr(number(got))) - Decimal(want)) <= tolerance


def id_list(value):
    if not isinstance(value, list):
        raise TypeError("expected a list of ids")
    return sorted(text(v) for v in value)


def pairs(value, *keys):
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise TypeError("expected a list of objects")
    return sorted(tuple(text(item[k]) for k in keys) for item in value)


def adjustments_equal(got, want):
    mine = pairs(got, "ledger_id", "bank_id")
    if mine != pairs(want, "ledger_id", "bank_id"):
        return False
    differences = {(text(a["ledger_id"]), text(a["bank_id"])): a["difference"] for a in got}
    return all(money_close(differences[(w["ledger_id"], w["bank_id"])], w["difference"]) for w in want)


def reconciliation():
    got, want = output("out/reconciliation.json"), E["reconciliation"]
    return share("reconciliation", [
        ("matched", lambda: pairs(got["matched"], "ledger_id", "bank_id") == pairs(want["matched"], "ledger_id", "bank_id")),
        ("unmatched_ledger", lambda: id_list(got["unmatched_ledger"]) == want["unmatched_ledger"]),
        ("unmatched_bank", lambda: id_list(got["unmatched_bank"]) == want["unmatched_bank"]),
        ("duplicate_bank", lambda: id_list(got["duplicate_bank"]) == want["duplicate_bank"]),
        ("adjustments", lambda: adjustments_equal(got["adjustments"], want["adjustments"])),
    ])


def policy():
    got = output("out/policy.json")
    return pairs(got["violations"], "claim_id", "rule") == sorted(tuple(v) for v in E["violations"])


def by_owner(got, want):
    if not isinstance(got, dict) or sorted(text(k) for k in got) != sorted(want):
        return False
    mine = {text(k): v for k, v in got.items()}
    return all(money_close(mine[owner], value, WEIGHTED) for owner, value in want.items())


def metrics():
    got, want = output("out/metrics.json"), E["metrics"]
    checks = [("matched_count", lambda: number(got["matched_count"]) == want["matched_count"]),
              ("win_rate", lambda: abs(Decimal(repr(number(got["win_rate"]))) - Decimal(want["win_rate"]))
               <= Decimal("0.0001")),
              ("weighted_by_owner", lambda: by_owner(got["weighted_by_owner"], want["weighted_by_owner"])),
              ("weighted_pipeline", lambda: money_close(got["weighted_pipeline"], want["weighted_pipeline"], WEIGHTED))]
    for key in ("unmatched_ledger_total", "unmatched_bank_total", "adjustments_total", "claims_total",
                "approved_claims_total", "closed_won_total"):
        checks.append((key, lambda key=key: money_close(got[key], want[key])))
    return share("metrics", checks)


run([("reconciliation", reconciliation), ("policy", policy), ("metrics", metrics)])
