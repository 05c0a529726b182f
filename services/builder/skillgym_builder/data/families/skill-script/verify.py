"""Verifier for skill-script: each result against what the skill's own script produced on the
same input when the task was built (hidden in expected.json): shape, values within tolerance
wherever they sit, and order."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, load_expected, run
from clock import mask

EXPECTED = load_expected()
TOL = EXPECTED["tolerance"]
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_scalar(got, want):
    if is_number(want):
        return is_number(got) and abs(got - want) <= max(1e-9, TOL * abs(want))
    return type(got) is type(want) and got == want


def read(result):
    with open(app_path(result["path"]), encoding="utf-8") as handle:
        text = mask(handle.read())
    if result["kind"] == "json":
        return json.loads(text)
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{result['path']} is empty")
    return lines


def pairs():
    return [(read(result), result) for result in EXPECTED["results"]]


# -- JSON results -------------------------------------------------------------------------

def shape(value):
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted((shape(item) for item in value), key=lambda s: json.dumps(s, sort_keys=True))
    return "number" if is_number(value) else type(value).__name__


def leaves(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}/{key}")
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, f"{path}[]")
    else:
        yield path, value


def scalar_key(value):
    return (0, float(value), "") if is_number(value) else (1, 0.0, json.dumps(value, sort_keys=True))


def same_multiset(got, want):
    grouped_got, grouped_want = {}, {}
    for path, value in leaves(got):
        grouped_got.setdefault(path, []).append(value)
    for path, value in leaves(want):
        grouped_want.setdefault(path, []).append(value)
    if set(grouped_got) != set(grouped_want):
        return False
    for path, values in grouped_want.items():
        mine = grouped_got[path]
        if len(mine) != len(values):
            return False
        if not all(same_scalar(g, w) for g, w in zip(sorted(mine, key=scalar_key), sorted(values, key=scalar_key), strict=False)):
            return False
    return True


def same_ordered(got, want):
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(same_ordered(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same_ordered(g, w) for g, w in zip(got, want, strict=False))
    return same_scalar(got, want)


# -- text results --------------------------------------------------------------------------

def tokens(line):
    parts, last = [], 0
    for match in NUMBER.finditer(line):
        parts.append(line[last:match.start()])
        parts.append(float(match.group()))
        last = match.end()
    parts.append(line[last:])
    return parts


def line_shape(line):
    return NUMBER.sub("#", line)


def same_line(got, want):
    mine, theirs = tokens(got), tokens(want)
    return len(mine) == len(theirs) and all(
        (isinstance(w, float) and isinstance(g, float) and abs(g - w) <= max(1e-9, TOL * abs(w))) or g == w
        for g, w in zip(mine, theirs, strict=False))


def line_key(line):
    return (line_shape(line), [t for t in tokens(line) if isinstance(t, float)])


# -- rubric ----------------------------------------------------------------------------------

def produced():
    return all(got is not None for got, _ in pairs())


def structure():
    for got, result in pairs():
        want = result["value"]
        if result["kind"] == "json":
            if shape(got) != shape(want):
                return False
        elif sorted(map(line_shape, got)) != sorted(map(line_shape, want)):
            return False
    return True


def values():
    for got, result in pairs():
        want = result["value"]
        if result["kind"] == "json":
            if not same_multiset(got, want):
                return False
        else:
            if len(got) != len(want):
                return False
            if not all(same_line(g, w) for g, w in zip(sorted(got, key=line_key), sorted(want, key=line_key), strict=False)):
                return False
    return True


def order():
    for got, result in pairs():
        want = result["value"]
        if result["kind"] == "json":
            if not same_ordered(got, want):
                return False
        elif len(got) != len(want) or not all(same_line(g, w) for g, w in zip(got, want, strict=False)):
            return False
    return True


checks = {"produced": produced, "structure": structure, "values": values, "order": order}
run([(name, checks[name]) for name in EXPECTED["items"]])
