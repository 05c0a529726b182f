"""Exact arithmetic for planting answers without a computer algebra system: fractions,
polynomials as power-to-coefficient maps, printed the way sympy's ``str()`` prints them."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

Poly = dict[int, Fraction]  # power -> coefficient


@dataclass
class Problem:
    kind: str
    statement: str  # Markdown; math between backticks in sympy syntax (noise is applied later)
    answer: Any  # str | list[str] | dict[str, str]
    check: dict[str, Any] = field(default_factory=dict)  # how the verifier compares
    source: str = ""  # the function a chained problem reuses (derivatives, ODEs)


def num(q: Fraction | int) -> str:
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def paren(q: Fraction | int) -> str:
    text = num(q)
    return f"({text})" if "/" in text or text.startswith("-") else text


def combo(terms: list[tuple[Fraction | int, str]]) -> str:
    """A sum of coefficient-times-body terms (an empty body is a constant), zeros left out."""
    shown = []
    for coeff, body in terms:
        coeff = Fraction(coeff)
        if not coeff:
            continue
        size = num(abs(coeff))
        text = size if not body else body if abs(coeff) == 1 else f"{size}*{body}"
        shown.append(("-" if coeff < 0 else "+", text))
    if not shown:
        return "0"
    head = ("-" if shown[0][0] == "-" else "") + shown[0][1]
    return head + "".join(f" {sign} {text}" for sign, text in shown[1:])


def times(k: int, var: str = "x") -> str:
    return combo([(k, var)])


def poly_str(poly: Poly, var: str = "x") -> str:
    ordered = sorted(poly, reverse=True)
    return combo([(poly[p], "" if p == 0 else var if p == 1 else f"{var}**{p}") for p in ordered])


def poly_mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for i, x in a.items():
        for j, y in b.items():
            out[i + j] = out.get(i + j, Fraction(0)) + x * y
    return {k: v for k, v in out.items() if v}


def poly_add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + sign * v
    return {k: v for k, v in out.items() if v}


def from_roots(roots: list[Fraction]) -> Poly:
    poly: Poly = {0: Fraction(1)}
    for root in roots:
        poly = poly_mul(poly, {1: Fraction(1), 0: -root})
    return poly


def subst(expr: str, var: str, value: str) -> str:
    """``expr`` with the variable replaced by ``(value)`` (names are single letters here)."""
    out, i = [], 0
    while i < len(expr):
        ch = expr[i]
        before = expr[i - 1] if i else " "
        after = expr[i + 1] if i + 1 < len(expr) else " "
        out.append(f"({value})" if ch == var and not before.isalnum() and not after.isalnum() else ch)
        i += 1
    return "".join(out)


def nonzero(rng: random.Random, lo: int, hi: int) -> int:
    return rng.choice([v for v in range(lo, hi + 1) if v])


def det(m: list[list[Any]]) -> Any:
    if len(m) == 1:
        return m[0][0]
    total: Any = 0
    for j in range(len(m)):
        minor = [row[:j] + row[j + 1 :] for row in m[1:]]
        total = total + (-1) ** j * m[0][j] * det(minor)
    return total


def matmul(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]
