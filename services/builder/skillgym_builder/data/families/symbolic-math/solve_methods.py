# --- answering the worksheet with other methods: solveset/linsolve, manual integration rules,
# Taylor coefficients from derivatives, characteristic polynomials, ODEs by their characteristic
# equation, and physics evaluated numerically with mpmath (decimals are allowed there) ---
import json
import re
import sys

import mpmath
import sympy
from mathsheet import X, arrange, expression, field, matrix, problems, root_order, write_answers
from sympy.integrals.manualintegrate import manualintegrate

TASK = json.loads(sys.argv[1])
ORDER = root_order() if TASK["order_from_skill"] else None
mpmath.mp.dps = 30


def definite(f, low, high):
    antiderivative = manualintegrate(f, X)
    return sympy.nsimplify(sympy.simplify(antiderivative.subs(X, high) - antiderivative.subs(X, low)))


def shortest(f):
    candidates = [sympy.cancel(f), sympy.trigsimp(f), sympy.factor(f), sympy.simplify(f)]
    return min(candidates, key=sympy.count_ops)


def taylor(f, power):
    return sum(sympy.diff(f, X, k).subs(X, 0) / sympy.factorial(k) * X**k for k in range(power + 1))


def ode(text):
    spans = re.findall(r"`([^`]*)`", text)
    ypp, yp, y = sympy.symbols("ypp yp y")
    lhs, rhs = (expression(s.replace("y''", "ypp").replace("y'", "yp"), {"ypp": ypp, "yp": yp, "y": y})
                for s in spans[0].split("="))
    linear = sympy.expand(lhs - rhs)
    a2, a1, a0 = (linear.coeff(v) for v in (ypp, yp, y))
    forcing = -linear.subs({ypp: 0, yp: 0, y: 0})
    r = sympy.Symbol("r")
    c1, c2 = sympy.symbols("c1 c2")
    basis = []
    for root, multiplicity in sympy.roots(a2 * r**2 + a1 * r + a0, r).items():
        real, imag = sympy.re(root), sympy.im(root)
        if imag > 0:
            basis += [sympy.exp(real * X) * sympy.cos(imag * X), sympy.exp(real * X) * sympy.sin(imag * X)]
        elif imag == 0:
            basis += [X**k * sympy.exp(root * X) for k in range(multiplicity)]
    general = forcing / a0 + sum(c * b for c, b in zip((c1, c2), basis, strict=False))
    conditions = []
    for condition in spans[1:]:
        match = re.fullmatch(r"y('*)\(0\) = (.+)", condition.strip())
        if match:
            conditions.append(sympy.diff(general, X, len(match.group(1))).subs(X, 0) - expression(match.group(2)))
    constants = [c for c in (c1, c2) if general.has(c)]
    (solution,) = sympy.linsolve(conditions, constants)
    return str(sympy.expand(general.subs(dict(zip(constants, solution, strict=True)))))


def physics(text):
    given = {k: mpmath.mpf(sympy.N(sympy.sympify(v), 30)) for k, v in re.findall(r"`(\w+) = ([^`]+)`", text)}
    g = given["g"]
    if "pendulum" in text:
        result = 2 * mpmath.pi * mpmath.sqrt(given["L"] / g)
    elif "dropped" in text:
        result = mpmath.sqrt(2 * given["h"] / g)
    elif "How far" in text:
        result = given["v"] ** 2 * mpmath.sin(2 * given["theta"]) / g
    elif "maximum height" in text:
        result = given["v"] ** 2 * mpmath.sin(given["theta"]) ** 2 / (2 * g)
    else:
        result = 2 * given["v"] * mpmath.sin(given["theta"]) / g
    return mpmath.nstr(result, 15)


def chain(text, answers):
    (ref,) = field(r"your answer to (P\d+)", text)
    if answers.get(ref, "malformed") == "malformed":
        raise ValueError(f"{ref} has no answer")
    earlier = sympy.sympify(answers[ref], locals={"x": X})
    if "integral" in text:
        low, high = field(r"from `(.+?)` to `(.+?)`", text)
        return str(definite(earlier, expression(low), expression(high)))
    (point,) = field(r"value of `y\((.+?)\)`", text)
    return str(sympy.nsimplify(earlier.subs(X, expression(point))))


def answer(problem, answers):
    kind, text = problem["kind"], problem["text"]
    if kind == "solve":
        lhs, rhs = field(r"solutions of `(.+?) = (.+?)`", text)
        roots = sympy.solveset(expression(lhs) - expression(rhs), X, domain=sympy.S.Reals)
        return [str(r) for r in arrange(list(roots), ORDER)]
    if kind == "system":
        spans = re.findall(r"`([^`]*)`", text)
        unknowns = [sympy.Symbol(s) for s in spans if "=" not in s]
        equations = [expression(s.split("=")[0]) - expression(s.split("=")[1]) for s in spans if "=" in s]
        (values,) = sympy.linsolve(equations, unknowns)
        return {str(u): str(v) for u, v in zip(unknowns, values, strict=True)}
    if kind == "derivative":
        return str(sympy.Derivative(expression(field(r"Differentiate `(.+?)` with respect to", text)[0]), X).doit())
    if kind == "definite integral":
        f, low, high = field(r"integral of `(.+?)` for `x` from `(.+?)` to `(.+?)`", text)
        return str(definite(expression(f), expression(low), expression(high)))
    if kind == "antiderivative":
        return str(manualintegrate(expression(field(r"antiderivative of `(.+?)` with respect", text)[0]), X))
    if kind == "limit":
        f, point = field(r"limit of `(.+?)` as `x` approaches `(.+?)`", text)
        return str(sympy.limit(sympy.cancel(expression(f)), X, expression(point)))
    if kind == "simplify":
        return str(shortest(expression(field(r"Simplify `(.+?)` as far", text)[0])))
    if kind == "series":
        f, power = field(r"polynomial of `(.+?)` about `x = 0` through the `x(?:\*\*|\^)(\d+)` term", text)
        return str(sympy.expand(taylor(expression(f), int(power))))
    if kind == "eigenvalues":
        m = matrix(field(r"matrix `(.+?)`", text)[0])
        lam = sympy.Symbol("lam")
        return [str(v) for v in arrange(sympy.roots(m.charpoly(lam).as_expr(), lam), ORDER)]
    if kind == "determinant":
        return str(sympy.expand(matrix(field(r"determinant of `(.+?)`", text)[0]).det(method="berkowitz")))
    if kind == "ODE":
        return ode(text)
    if kind == "physics":
        return physics(text)
    return chain(text, answers)


answers = {}
for problem in sorted(problems(TASK["worksheet"]), key=lambda p: p["kind"] == "multi-step"):
    try:
        answers[problem["id"]] = answer(problem, answers)
    except Exception as exc:  # a problem that cannot be posed as written
        print(f"{problem['id']}: malformed ({type(exc).__name__}: {exc})")
        answers[problem["id"]] = "malformed"
write_answers(dict(sorted(answers.items())))
print(f"answered {len(answers)} problems")
