"""Verifier for guidance-selection: any selection meeting all constraints is accepted."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import load_expected, norm, read_json, run

EXPECTED = load_expected()
MINUTES = EXPECTED["minutes"]
SECTION = {item: norm(section) for item, section in EXPECTED["sections"].items()}
RULES = EXPECTED["constraints"]


def selection():
    got = read_json("selection.json")
    chosen = got["selected"]
    if not isinstance(chosen, list) or len(set(chosen)) != len(chosen) or not set(chosen) <= set(MINUTES):
        raise ValueError("selected must list distinct candidate ids")
    return got, chosen


def feasible():
    _, chosen = selection()
    if sum(MINUTES[i] for i in chosen) > RULES["budget_minutes"] or len(chosen) < RULES["min_items"]:
        return False
    sections = [SECTION[i] for i in chosen]
    if any(norm(s) not in sections for s in RULES["cover_sections"]):
        return False
    return sections.count(norm(RULES["cap_section"])) <= RULES["cap_count"]


def total():
    got, chosen = selection()
    value = got["total_minutes"]
    return not isinstance(value, bool) and value == sum(MINUTES[i] for i in chosen)


run([("feasible", feasible), ("total", total)])
