# --- answering the worksheet with sympy's high-level solvers ---
import json
import re
import sys

import sympy
from mathsheet import X, arrange, expression, field, matrix, problems, root_order, write_answers

TASK = json.loads(sys.argv[1])
ORDER = root_order() if TASK["order_from_skill"] else None
CALLS = {"x": X}


def solve(text):
    lhs, rhs = field(r"solutions of `(.+?) = (.+?)`", text)
    roots = [r for r in sympy.solve(sympy.Eq(expression(lhs), expression(rhs)), X) if r.is_real]
    return [str(r) for r in arrange(roots, ORDER)]


def system(text):
    spans = re.findall(r"`([^`]*)`", text)
    equations = [sympy.Eq(*(expression(side) for side in s.split("="))) for s in spans if "=" in s]
    unknowns = [sympy.Symbol(s) for s in spans if "=" not in s]
    solution = sympy.solve(equations, unknowns, dict=True)[0]
    return {str(k): str(v) for k, v in solution.items()}


def ode(text):
    spans = re.findall(r"`([^`]*)`", text)
    f = sympy.Function("f")
    names = {"ypp": sympy.Symbol("ypp"), "yp": sympy.Symbol("yp"), "y": sympy.Symbol("y")}
    lhs, rhs = (expression(side.replace("y''", "ypp").replace("y'", "yp"), names) for side in spans[0].split("="))
    equation = sympy.Eq(lhs, rhs).subs({names["ypp"]: f(X).diff(X, 2), names["yp"]: f(X).diff(X), names["y"]: f(X)})
    ics = {}
    for condition in spans[1:]:
        match = re.fullmatch(r"y('*)\(0\) = (.+)", condition.strip())
        if match:
            ics[f(X).diff(X, len(match.group(1))).subs(X, 0) if match.group(1) else f(0)] = expression(match.group(2))
    return str(sympy.dsolve(equation, f(X), ics=ics).rhs)


def physics(text):
    number = {k: sympy.sympify(v) for k, v in re.findall(r"`(\w+) = ([^`]+)`", text)}
    g = number["g"]
    if "pendulum" in text:
        return str(sympy.simplify(2 * sympy.pi * sympy.sqrt(number["L"] / g)))
    if "dropped" in text:
        return str(sympy.simplify(sympy.sqrt(2 * number["h"] / g)))
    v, theta = number["v"], number["theta"]
    if "How far" in text:
        result = v**2 * sympy.sin(2 * theta) / g
    elif "maximum height" in text:
        result = v**2 * sympy.sin(theta) ** 2 / (2 * g)
    else:
        result = 2 * v * sympy.sin(theta) / g
    return str(sympy.simplify(result))


def chain(text, answers):
    (ref,) = field(r"your answer to (P\d+)", text)
    if answers.get(ref, "malformed") == "malformed":
        raise ValueError(f"{ref} has no answer")
    earlier = sympy.sympify(answers[ref], locals=CALLS)
    if "integral" in text:
        low, high = field(r"from `(.+?)` to `(.+?)`", text)
        return str(sympy.simplify(sympy.integrate(earlier, (X, expression(low), expression(high)))))
    (point,) = field(r"value of `y\((.+?)\)`", text)
    return str(sympy.simplify(earlier.subs(X, expression(point))))


def answer(problem, answers):
    kind, text = problem["kind"], problem["text"]
    if kind == "solve":
        return solve(text)
    if kind == "system":
        return system(text)
    if kind == "derivative":
        return str(sympy.diff(expression(field(r"Differentiate `(.+?)` with respect to", text)[0]), X))
    if kind == "definite integral":
        f, low, high = field(r"integral of `(.+?)` for `x` from `(.+?)` to `(.+?)`", text)
        return str(sympy.simplify(sympy.integrate(expression(f), (X, expression(low), expression(high)))))
    if kind == "antiderivative":
        return str(sympy.integrate(expression(field(r"antiderivative of `(.+?)` with respect", text)[0]), X))
    if kind == "limit":
        f, point = field(r"limit of `(.+?)` as `x` approaches `(.+?)`", text)
        return str(sympy.limit(expression(f), X, expression(point)))
    if kind == "simplify":
        return str(sympy.simplify(expression(field(r"Simplify `(.+?)` as far", text)[0])))
    if kind == "series":
        f, power = field(r"polynomial of `(.+?)` about `x = 0` through the `x(?:\*\*|\^)(\d+)` term", text)
        return str(sympy.series(expression(f), X, 0, int(power) + 1).removeO())
    if kind == "eigenvalues":
        values = matrix(field(r"matrix `(.+?)`", text)[0]).eigenvals()
        return [str(v) for v in arrange(values, ORDER)]
    if kind == "determinant":
        return str(sympy.expand(matrix(field(r"determinant of `(.+?)`", text)[0]).det()))
    if kind == "ODE":
        return ode(text)
    if kind == "physics":
        return physics(text)
    return chain(text, answers)


answers = {}
for problem in problems(TASK["worksheet"]):
    try:
        answers[problem["id"]] = answer(problem, answers)
    except Exception as exc:  # a problem that cannot be posed as written
        print(f"{problem['id']}: malformed ({type(exc).__name__}: {exc})")
        answers[problem["id"]] = "malformed"
write_answers(answers)
print(f"answered {len(answers)} problems")
