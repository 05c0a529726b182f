"""Verifier for section-trace: locations, per-section summary and document order."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import load_expected, norm, read_json, read_lines, run

EXPECTED = load_expected()
QUERIES = EXPECTED["queries"]


def locations():
    got = read_json("out/locations.json")
    if not isinstance(got, dict) or set(got) != set(QUERIES):
        return False
    return all(norm(got[qid]) == norm(item["section"]) for qid, item in QUERIES.items())


def summary():
    got = read_json("out/summary.json")
    if not isinstance(got, dict):
        return False
    want: dict[str, int] = {}
    for item in QUERIES.values():
        want[norm(item["section"])] = want.get(norm(item["section"]), 0) + 1
    counts: dict[str, int] = {}
    for key, value in got.items():
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        counts[norm(key)] = counts.get(norm(key), 0) + value
    return {k: v for k, v in counts.items() if v} == want


def order():
    want = sorted(QUERIES, key=lambda qid: QUERIES[qid]["line"])
    return read_lines("out/order.txt") == want


run([("locations", locations), ("summary", summary), ("order", order)])
