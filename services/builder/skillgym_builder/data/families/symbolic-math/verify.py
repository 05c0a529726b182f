"""Verifier for symbolic-math: every answer read with the restricted parser (mathcheck.py; the
agent's text is never evaluated) and compared with the answer planted when the worksheet was
generated: equivalent expressions, antiderivatives up to a constant, solution lists as sets (in
the skill's order where it prescribes one), systems per unknown, malformed problems reported."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import sympy
from checks import app_path, load_expected, run
from mathcheck import DECIMAL_TOL, EXACT_TOL, Budget, OutOfTime, Rejected, exact, parse, same, value

E = load_expected()
PROBLEMS = E["problems"]
MAX_BYTES = 512 * 1024
SECONDS_PER_PROBLEM = 6


def load_answers():
    with open(app_path("out/answers.json"), "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError("answers.json is too large")
    answers = json.loads(data.decode("utf-8"))["answers"]
    if not isinstance(answers, dict):
        raise TypeError("answers must be an object")
    return answers


def _number(text, spec):
    expr = parse(text, [])
    if expr.free_symbols or value(expr) is None:
        raise Rejected("not a finite number")
    if not spec.get("decimals") and not exact(expr):
        raise Rejected("a decimal where an exact value is required")
    return expr


def _expression(text, spec):
    expr = parse(text, spec["vars"])
    if not exact(expr):
        raise Rejected("a decimal where an exact value is required")
    return expr


def _numbers(got, spec, ordered):
    if not isinstance(got, list) or not all(isinstance(item, str) for item in got):
        raise Rejected("not a list of strings")
    values = [_number(item, spec) for item in got]
    numeric = [complex(value(v)) for v in values]
    if any(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for i, a in enumerate(numeric) for b in numeric[i + 1:]):
        raise Rejected("a value listed twice")
    if ordered:
        reals = [n.real for n in numeric]
        wanted = sorted(reals, reverse=E["order"] == "descending")
        if reals != wanted:
            raise Rejected(f"not in {E['order']} order")
    return values


def read(pid, got):
    """The answer in its required form, or Rejected."""
    spec = PROBLEMS[pid]
    kind = spec["type"]
    if kind == "malformed":
        if not (isinstance(got, str) and got.strip().lower() == "malformed"):
            raise Rejected("a malformed problem must be reported as malformed")
        return "malformed"
    if kind == "roots":
        return _numbers(got, spec, E["order"] is not None)
    if kind == "system":
        if not isinstance(got, dict) or set(got) != set(spec["answer"]):
            raise Rejected("not an object with exactly the unknowns")
        return {name: _number(text, spec) for name, text in got.items()}
    if kind == "number":
        return _number(got, spec)
    expr = _expression(got, spec)
    x = sympy.Symbol("x")
    if kind == "simplified" and sympy.count_ops(expr) > sympy.count_ops(parse(spec["answer"], spec["vars"])) + 2:
        raise Rejected("not simplified")
    if kind == "polynomial" and (not expr.is_polynomial(x) or sympy.degree(expr, x) > spec["degree"]):
        raise Rejected(f"not a polynomial of degree at most {spec['degree']}")
    return expr


def correct(pid, mine):
    spec = PROBLEMS[pid]
    kind, want = spec["type"], spec["answer"]
    tol = DECIMAL_TOL if spec.get("decimals") else EXACT_TOL
    if kind == "malformed":
        return mine == "malformed"
    if kind == "roots":
        expected = [parse(w, []) for w in want]
        unused = list(mine)
        for target in expected:
            match = next((m for m in unused if same(m, target, [], pid, tol)), None)
            if match is None:
                return False
            unused.remove(match)
        return not unused
    if kind == "system":
        return all(same(mine[name], parse(text, []), [], pid, tol) for name, text in want.items())
    target = parse(want, spec["vars"])
    if kind == "antiderivative":
        x = sympy.Symbol("x")
        return same(sympy.diff(mine, x), sympy.diff(target, x), spec["vars"], pid)
    if kind == "polynomial":
        return sympy.expand(mine - target) == 0
    return same(mine, target, spec["vars"], pid, tol)


def grade():
    """Per problem: (answer in the required form, answer correct); extra ids count against the form."""
    answers = load_answers()
    results = {}
    for pid in PROBLEMS:
        form = right = False
        try:
            with Budget(SECONDS_PER_PROBLEM):
                mine = read(pid, answers[pid])
                form = True
                right = bool(correct(pid, mine))
        except (OutOfTime, Exception) as exc:  # a malformed or wrong answer fails this problem only
            print(f"{pid}: {type(exc).__name__}: {str(exc)[:160]}")
        if form and not right:
            print(f"{pid}: not the planted answer")
        results[pid] = (form, right)
    extra = len(set(answers) - set(PROBLEMS))
    return results, extra


RESULTS = None


def results():
    global RESULTS
    if RESULTS is None:
        RESULTS = grade()
    return RESULTS


def answers_score():
    graded, _ = results()
    return sum(right for _, right in graded.values()) / len(graded)


def form_score():
    graded, extra = results()
    return sum(form for form, _ in graded.values()) / (len(graded) + extra)


run([("answers", answers_score), ("form", form_score)])
