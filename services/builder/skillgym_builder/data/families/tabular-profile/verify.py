"""Verifier for tabular-profile: the agent's profile against values recomputed from the
generated data (hidden in expected.json), structurally and with a relative tolerance."""

import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, close, exact_int, load_expected, norm, read_json, run

EXPECTED = load_expected()
TOL = EXPECTED["tolerance"]
STATS = ("mean", "median", "std", "min", "max")


def profile():
    return read_json("out/profile.json")["datasets"]


def entries():
    got = profile()
    return [(got[path], want) for path, want in EXPECTED["datasets"].items()]


def schema():
    got = profile()
    if set(got) != set(EXPECTED["datasets"]):
        return False
    for entry, want in entries():
        if set(entry["columns"]) != set(want["columns"]) or set(entry["groups"]) != set(want["groups"]):
            return False
        for column in entry["columns"].values():
            if not all(isinstance(column[k], (int, float)) and not isinstance(column[k], bool) for k in STATS):
                return False
            if not isinstance(column["outliers"], list):
                return False
    return True


def counts():
    for entry, want in entries():
        for key in ("rows", "duplicate_rows", "rejected_rows"):
            if not exact_int(entry[key], want[key]):
                return False
        for name, column in want["columns"].items():
            if not exact_int(entry["columns"][name]["missing"], column["missing"]):
                return False
    return True


def statistics():
    for entry, want in entries():
        for name, column in want["columns"].items():
            if not all(close(entry["columns"][name][k], column[k], rel=TOL, abs_tol=TOL) for k in STATS):
                return False
    return True


def outliers():
    for entry, want in entries():
        for name, column in want["columns"].items():
            got = entry["columns"][name]["outliers"]
            if sorted(int(v) for v in got if not isinstance(v, bool)) != column["outliers"] or len(got) != len(column["outliers"]):
                return False
    return True


def groups():
    for entry, want in entries():
        for label, group in want["groups"].items():
            mine = entry["groups"][label]
            if not exact_int(mine["rows"], group["rows"]):
                return False
            key = next(k for k in group if k.startswith("mean_"))
            if not close(mine[key], group[key], rel=TOL, abs_tol=TOL):
                return False
    return True


def report():
    spec = EXPECTED["report"]
    with open(app_path("out/report.md"), encoding="utf-8") as handle:
        text = handle.read()
    if hashlib.sha256(text.strip().encode()).hexdigest() in spec["copy_hashes"]:
        return False  # a copy of a document the skill ships
    headings, bodies, current = [], {}, None
    for line in text.splitlines():
        match = re.match(r"^\s{0,3}#{1,6}\s+(.*)$", line)
        if match:
            current = norm(match.group(1))
            headings.append(current)
            bodies[current] = ""
        elif current is not None and line.strip():
            bodies[current] += " " + norm(line)
    for title in spec["sections"]:
        found = [h for h in headings if norm(title) in h]
        # every section covers every dataset, by file name
        if not any(all(norm(name) in bodies[h] for name, _ in spec["mentions"]) for h in found):
            return False
    return all(re.search(rf"\b{rows}\b", text) for _, rows in spec["mentions"])


items = [("schema", schema), ("counts", counts), ("statistics", statistics), ("outliers", outliers), ("groups", groups)]
if EXPECTED.get("report"):
    items.append(("report", report))
run(items)
