"""Verifier for spreadsheet-extract: fields, items (as a multiset, amounts to the cent), skipped
error rows and totals against the values planted in the generated workbooks."""

import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import close, load_expected, read_json, run, share

E = load_expected()
FIELDS = ("employee", "department", "period_start", "period_end", "report_id")


def reports():
    got = read_json("out/expenses.json")["reports"]
    return [(got[name], want) for name, want in E["reports"].items()]


def schema():
    got = read_json("out/expenses.json")["reports"]
    required = set(FIELDS) | {"items", "skipped_rows", "totals_by_category", "total"}
    return set(got) == set(E["reports"]) and all(required <= set(entry) for entry in got.values())


def fields():
    return all(str(mine[f]).strip() == want[f] for mine, want in reports() for f in FIELDS)


def key(item):
    return (str(item["date"]).strip()[:10], str(item["category"]).strip(), str(item["description"]).strip(),
            round(float(item["amount"]) * 100))


def items():
    for mine, want in reports():
        if collections.Counter(key(i) for i in mine["items"]) != collections.Counter(key(i) for i in want["items"]):
            return False
    return True


def skipped():
    return all(sorted(int(r) for r in mine["skipped_rows"]) == want["skipped_rows"] for mine, want in reports())


def consistent(mine):
    """The reported totals are the sums of the reported items."""
    sums = collections.Counter()
    for item in mine["items"]:
        sums[str(item["category"]).strip()] += float(item["amount"])
    totals = {str(k).strip(): v for k, v in mine["totals_by_category"].items()}
    return set(sums) == set(totals) and all(close(totals[k], v, rel=0, abs_tol=0.01) for k, v in sums.items()) and \
        close(mine["total"], sum(sums.values()), rel=0, abs_tol=0.01)


def totals():
    for mine, want in reports():
        if not consistent(mine):
            return False
        got = {str(k).strip(): v for k, v in mine["totals_by_category"].items()}
        if set(got) != set(want["totals_by_category"]):
            return False
        if not all(close(got[k], v, rel=0, abs_tol=0.01) for k, v in want["totals_by_category"].items()):
            return False
        if not close(mine["total"], want["total"], rel=0, abs_tol=0.01):
            return False
    return True


def records():
    """The share of the record checks met, each reported on its own."""
    return share("records", [("schema", schema), ("fields", fields), ("items", items), ("skipped", skipped)])


run([("records", records), ("totals", totals)])
