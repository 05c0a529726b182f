"""Verifier for procedure-dag: any linear extension of the combined graph, and exact stages."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import load_expected, read_json, read_lines, run

EXPECTED = load_expected()
ITEMS = set(EXPECTED["items"])
EDGES = [tuple(edge) for edge in EXPECTED["edges"]]


def plan():
    order = read_lines("plan.txt")
    if len(order) != len(ITEMS) or set(order) != ITEMS:
        return False
    position = {item: index for index, item in enumerate(order)}
    return all(position[a] < position[b] for a, b in EDGES)


def stages():
    got = read_json("stages.json")
    if not isinstance(got, dict) or set(got) != ITEMS:
        return False
    return all(not isinstance(got[i], bool) and got[i] == EXPECTED["stages"][i] for i in ITEMS)


run([("plan", plan), ("stages", stages)])
