# --- reading the worksheet and the skill's conventions (sympy) ---
import json
import os
import re

import sympy
from skillfacts import skill_lines
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

X, A = sympy.symbols("x a")
NAMES = {"x": X, "a": A, "y": sympy.Symbol("y"), "z": sympy.Symbol("z"), "e": sympy.E, "E": sympy.E,
         "ln": sympy.log, "arctan": sympy.atan, "arcsin": sympy.asin, "arccos": sympy.acos,
         "infinity": sympy.oo, "oo": sympy.oo, "pi": sympy.pi}
TRANSFORMS = (*standard_transformations, implicit_multiplication_application, convert_xor)
LIST_CUE = re.compile(r"\b(roots|solutions|solution (lists?|sets?)|eigenvalues)\b", re.I)
ASCENDING = re.compile(r"\b(ascending|increasing)\b|\b(smallest|lowest) (first|to (the )?(largest|highest))\b", re.I)
DESCENDING = re.compile(r"\b(descending|decreasing)\b|\b(largest|highest) (first|to (the )?(smallest|lowest))\b", re.I)


def expression(text, extra=None):
    """A worksheet expression in any of its spellings (^, ln, arctan, e^(...), 3x, infinity)."""
    if not text.strip() or text.count("(") != text.count(")"):
        raise ValueError(f"unreadable math: {text!r}")
    return parse_expr(text, local_dict={**NAMES, **(extra or {})}, transformations=TRANSFORMS)


def matrix(text, square=True):
    rows = expression(text)
    if not rows or any(len(row) != len(rows[0]) for row in rows) or (square and len(rows) != len(rows[0])):
        raise ValueError("not a square matrix")
    return sympy.Matrix(rows)


def problems(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    found = []
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        head, _, body = block.partition("\n")
        match = re.match(r"(P\d+) \((.+)\)", head.strip())
        if match:
            found.append({"id": match.group(1), "kind": match.group(2), "text": " ".join(body.split())})
    return found


def field(pattern, text):
    match = re.search(pattern, text)
    if not match:
        raise ValueError("the statement does not read as expected")
    return match.groups()


def root_order():
    """The order the installed skill prescribes for roots and eigenvalues (fails without the skill)."""
    for line in skill_lines():
        if LIST_CUE.search(line):
            if DESCENDING.search(line):
                return "descending"
            if ASCENDING.search(line):
                return "ascending"
    raise SystemExit("the skill states no order for solution lists")


def arrange(values, order):
    if order is None:
        return list(values)
    return sorted(values, key=lambda v: float(sympy.re(sympy.N(v))), reverse=order == "descending")


def write_answers(answers):
    os.makedirs("out", exist_ok=True)
    with open("out/answers.json", "w", encoding="utf-8") as handle:
        json.dump({"answers": answers}, handle, indent=2)
        handle.write("\n")
