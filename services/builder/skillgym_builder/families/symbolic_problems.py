"""Problem templates of the symbolic-math family. Every problem is planted with its answer known
by construction (exact arithmetic on fractions and polynomials here; no computer algebra in the
builder); the task's verifier checks equivalence with sympy and the reference solution re-derives
every answer with sympy, so a slip in a template shows up in the family's tests."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from skillgym_builder.families.symbolic_exact import (
    Poly,
    Problem,
    combo,
    det,
    from_roots,
    matmul,
    nonzero,
    num,
    paren,
    poly_add,
    poly_mul,
    poly_str,
    times,
)


def solve(rng: random.Random) -> Problem:
    if rng.random() < 0.5:
        roots = [Fraction(r) for r in rng.sample([v for v in range(-5, 6) if v], 3)]
        poly = from_roots(roots)
        lhs = poly_str({k: v for k, v in poly.items() if k}) if poly.get(0) else poly_str(poly)
        rhs = num(-poly[0]) if poly.get(0) else "0"
        answer = [num(r) for r in roots]
    else:
        p, s = rng.randint(-4, 4), rng.choice([2, 3, 5, 6, 7, 10])
        lhs, rhs = poly_str({2: Fraction(1), 1: Fraction(-2 * p), 0: Fraction(p * p - s)}), "0"
        answer = [f"{p} + sqrt({s})" if p else f"sqrt({s})", f"{p} - sqrt({s})" if p else f"-sqrt({s})"]
    return Problem("solve", f"Find all real solutions of `{lhs} = {rhs}`.", answer,
                   {"type": "roots", "vars": []})


def system(rng: random.Random) -> Problem:
    names = ["x", "y", "z"][: rng.choice([2, 3])]
    while True:
        rows = [[rng.randint(-4, 4) for _ in names] for _ in names]
        if det([[Fraction(v) for v in row] for row in rows]) != 0:
            break
    solution = [rng.randint(-6, 6) for _ in names]
    equations = []
    for row in rows:
        poly = "".join(f" {'-' if c < 0 else '+'} {abs(c) if abs(c) != 1 else ''}{'*' if abs(c) != 1 else ''}{n}"
                       for c, n in zip(row, names, strict=True) if c).strip()
        poly = poly[2:] if poly.startswith("+ ") else "-" + poly[2:]
        equations.append(f"`{poly} = {sum(c * s for c, s in zip(row, solution, strict=True))}`")
    unknowns = ", ".join(f"`{n}`" for n in names)
    return Problem("system", f"Solve the linear system {', '.join(equations)} for {unknowns}.",
                   {n: str(s) for n, s in zip(names, solution, strict=True)}, {"type": "system", "vars": []})


DERIVATIVES = [
    lambda n, a, c: (f"x**{n}*sin({a}*x)", f"{n}*x**{n - 1}*sin({a}*x) + {a}*x**{n}*cos({a}*x)"),
    lambda n, a, c: (f"exp({a}*x)*cos({n}*x)", f"exp({a}*x)*({a}*cos({n}*x) - {n}*sin({n}*x))"),
    lambda n, a, c: (f"log(x**2 + {c})", f"2*x/(x**2 + {c})"),
    lambda n, a, c: (f"(x**2 + {c})**{n}", f"{2 * n}*x*(x**2 + {c})**{n - 1}"),
    lambda n, a, c: (f"atan({a}*x)", f"{a}/(1 + {a * a}*x**2)"),
    lambda n, a, c: (f"sqrt(x**2 + {c})", f"x/sqrt(x**2 + {c})"),
    lambda n, a, c: (f"x**2*exp(-{a}*x)", f"(2*x - {a}*x**2)*exp(-{a}*x)"),
]


def derivative(rng: random.Random) -> Problem:
    f, answer = rng.choice(DERIVATIVES)(rng.randint(2, 4), rng.randint(2, 5), rng.randint(1, 9))
    return Problem("derivative", f"Differentiate `{f}` with respect to `x`.", answer,
                   {"type": "expr", "vars": ["x"]}, source=f)


def integral(rng: random.Random) -> Problem:
    a, c = rng.randint(2, 4), rng.randint(1, 4)
    choice = rng.randrange(5)
    if choice == 0:
        poly = {2: Fraction(nonzero(rng, -5, 5)), 1: Fraction(rng.randint(-5, 5)), 0: Fraction(rng.randint(-5, 5))}
        lo, hi = sorted(rng.sample(range(-2, 4), 2))
        value = sum(v * Fraction(hi ** (k + 1) - lo ** (k + 1), k + 1) for k, v in poly.items())
        f, lo_s, hi_s, answer = poly_str(poly), str(lo), str(hi), num(value)
    elif choice == 1:
        f, lo_s, hi_s, answer = f"x*exp({a}*x)", "0", "1", f"({a - 1}*exp({a}) + 1)/{a * a}"
    elif choice == 2:
        f, lo_s, hi_s, answer = f"1/(x**2 + {c * c})", "0", str(c), f"pi/{4 * c}"
    elif choice == 3:
        f, lo_s, hi_s, answer = f"sin({a}*x)", "0", f"pi/{a}", f"2/{a}"
    else:
        f, lo_s, hi_s, answer = f"x*cos({a}*x)", "0", f"pi/{2 * a}", f"pi/{2 * a * a} - 1/{a * a}"
    return Problem("definite_integral", f"Evaluate the integral of `{f}` for `x` from `{lo_s}` to `{hi_s}`.",
                   answer, {"type": "number", "vars": []})


def antiderivative(rng: random.Random) -> Problem:
    a, c = rng.randint(2, 5), rng.randint(1, 4)
    options = [
        (f"x*exp({a}*x)", f"exp({a}*x)*({a}*x - 1)/{a * a}"),
        (f"x*cos({a}*x)", f"x*sin({a}*x)/{a} + cos({a}*x)/{a * a}"),
        (f"1/(x**2 + {c * c})", f"atan(x/{c})/{c}"),
        (f"2*x/(x**2 + {c})", f"log(x**2 + {c})"),
        ("sin(x)**2", "x/2 - sin(2*x)/4"),
        ("x**2*log(x)" if a % 2 else f"{a}*x**3 - x", "x**3*log(x)/3 - x**3/9" if a % 2 else f"{a}*x**4/4 - x**2/2"),
    ]
    f, answer = rng.choice(options)
    return Problem("antiderivative", f"Find an antiderivative of `{f}` with respect to `x`.", answer,
                   {"type": "antiderivative", "vars": ["x"]})


def limit(rng: random.Random) -> Problem:
    a, b, c = rng.randint(2, 6), rng.randint(2, 5), rng.randint(2, 5)
    p, r = rng.randint(1, 6), rng.randint(2, 7)
    options = [
        (f"sin({a}*x)/({b}*x)", "0", num(Fraction(a, b))),
        (f"(exp({a}*x) - 1)/x", "0", str(a)),
        (f"(1 - cos({a}*x))/x**2", "0", num(Fraction(a * a, 2))),
        (f"(x**2 - {c * c})/(x - {c})", str(c), str(2 * c)),
        (f"(1 + {a}/x)**x", "oo", f"exp({a})"),
        (f"({p}*x**2 + {b}*x + 1)/({r}*x**2 + {c})", "oo", num(Fraction(p, r))),
        (f"(sqrt(x + {c * c}) - {c})/x", "0", num(Fraction(1, 2 * c))),
    ]
    f, point, answer = rng.choice(options)
    return Problem("limit", f"Find the limit of `{f}` as `x` approaches `{point}`.", answer,
                   {"type": "number", "vars": []})


def simplify(rng: random.Random) -> Problem:
    c, p, q, a = rng.randint(2, 6), rng.randint(1, 5), rng.randint(1, 5), rng.randint(2, 7)
    while q == p:
        q = rng.randint(1, 5)
    options = [
        (f"(x**2 - {c * c})/(x - {c})", f"x + {c}"),
        (f"({poly_str(from_roots([Fraction(-p), Fraction(-q)]))})/(x + {p})", f"x + {q}"),
        (f"sin(x)**2 + cos(x)**2 + {a}*x", f"{a}*x + 1"),
        (f"(x**3 - {c * c}*x)/(x**2 + {c}*x)", f"x - {c}"),
        ("(1 - cos(x)**2)/sin(x)", "sin(x)"),
        ("(exp(2*x) - 1)/(exp(x) + 1)", "exp(x) - 1"),
        (f"(x**2 + {2 * c}*x + {c * c})/(x + {c})", f"x + {c}"),
    ]
    f, answer = rng.choice(options)
    return Problem("simplify", f"Simplify `{f}` as far as possible.", answer,
                   {"type": "simplified", "vars": ["x"]})


def _series(name: str, a: int, order: int) -> list[Fraction]:
    fact = [Fraction(math.factorial(k)) for k in range(order + 1)]
    if name == "exp":
        return [Fraction(a) ** k / fact[k] for k in range(order + 1)]
    if name == "sin":
        return [Fraction((-1) ** ((k - 1) // 2) * a**k) / fact[k] if k % 2 else Fraction(0) for k in range(order + 1)]
    if name == "cos":
        return [Fraction((-1) ** (k // 2) * a**k) / fact[k] if k % 2 == 0 else Fraction(0) for k in range(order + 1)]
    if name == "log":
        return [Fraction(0)] + [Fraction((-1) ** (k + 1) * a**k, k) for k in range(1, order + 1)]
    if name == "geometric":
        return [Fraction(a) ** k for k in range(order + 1)]
    coeffs, binom = [], Fraction(1)  # sqrt(1 + a*x)
    for k in range(order + 1):
        coeffs.append(binom * Fraction(a) ** k)
        binom = binom * (Fraction(1, 2) - k) / (k + 1)
    return coeffs


SERIES_TEXT = {"exp": "exp({a}*x)", "sin": "sin({a}*x)", "cos": "cos({a}*x)", "log": "log(1 + {a}*x)",
               "geometric": "1/(1 - {a}*x)", "sqrt": "sqrt(1 + {a}*x)"}


def series(rng: random.Random) -> Problem:
    order = rng.choice([4, 5])
    first, second = rng.sample(sorted(SERIES_TEXT), 2)
    a, b = rng.randint(1, 3), rng.randint(1, 3)
    coeffs = _series(first, a, order)
    text = SERIES_TEXT[first].format(a=a)
    if rng.random() < 0.4 and {first, second} & {"exp", "sin", "cos"}:
        other = _series(second, b, order)
        coeffs = [sum((coeffs[i] * other[k - i] for i in range(k + 1)), Fraction(0)) for k in range(order + 1)]
        text = f"{text}*{SERIES_TEXT[second].format(a=b)}"
    text = text.replace("(1*x)", "(x)").replace("1*x", "x")
    answer = poly_str({k: v for k, v in enumerate(coeffs)})
    return Problem("series", f"Give the Taylor polynomial of `{text}` about `x = 0` through the `x**{order}` term.",
                   answer, {"type": "polynomial", "vars": ["x"], "degree": order})


def eigenvalues(rng: random.Random) -> Problem:
    size = rng.choice([2, 3])
    if size == 2 and rng.random() < 0.4:
        p, r, q = rng.randint(-3, 4), rng.randint(-3, 4), nonzero(rng, -3, 3)
        disc = (p - r) ** 2 + 4 * q * q
        root = math.isqrt(disc)
        matrix = [[p, q], [q, r]]
        if root * root == disc:
            values = [Fraction(p + r + root, 2), Fraction(p + r - root, 2)]
            answer = [num(v) for v in values]
        else:
            answer = [f"{paren(Fraction(p + r, 2))} + sqrt({disc})/2", f"{paren(Fraction(p + r, 2))} - sqrt({disc})/2"]
    else:
        eig = rng.sample(range(-5, 7), size)
        upper = [[eig[i] if i == j else (rng.randint(-2, 2) if j > i else 0) for j in range(size)] for i in range(size)]
        matrix = upper
        for turn in range(2):
            i, j = sorted(rng.sample(range(size), 2), reverse=turn == 0)  # one step below the diagonal
            k = nonzero(rng, -2, 2)
            step = [[int(r == s) + (k if (r, s) == (i, j) else 0) for s in range(size)] for r in range(size)]
            back = [[int(r == s) - (k if (r, s) == (i, j) else 0) for s in range(size)] for r in range(size)]
            matrix = matmul(matmul(step, matrix), back)
        answer = [str(v) for v in eig]
    return Problem("eigenvalues", f"Find the eigenvalues of the matrix `{matrix}`.", answer,
                   {"type": "roots", "vars": []})


def determinant(rng: random.Random) -> Problem:
    cells: list[list[tuple[str, Poly]]] = []
    for i in range(3):
        row = []
        for j in range(3):
            k = rng.randint(-3, 3)
            if i == j or rng.random() < 0.2:
                row.append((f"a + {k}" if k > 0 else f"a - {-k}" if k < 0 else "a", {1: Fraction(1), 0: Fraction(k)}))
            else:
                row.append((str(k), {0: Fraction(k)} if k else {}))
        cells.append(row)
    polys: list[list[Poly]] = [[p for _, p in row] for row in cells]
    det: Poly = {}
    for j in range(3):
        minor = [[polys[r][c] for c in range(3) if c != j] for r in (1, 2)]
        two = poly_add(poly_mul(minor[0][0], minor[1][1]), poly_mul(minor[0][1], minor[1][0]), -1)
        det = poly_add(det, poly_mul(polys[0][j], two), 1 if j % 2 == 0 else -1)
    shown = "[" + ", ".join("[" + ", ".join(text for text, _ in row) + "]" for row in cells) + "]"
    return Problem("determinant", f"Compute the determinant of `{shown}` as a polynomial in `a`.",
                   poly_str(det, "a"), {"type": "expr", "vars": ["a"]})


def ode(rng: random.Random) -> Problem:
    y0, dy0 = nonzero(rng, -3, 4), rng.randint(-3, 4)
    choice = rng.randrange(4)
    if choice == 0:
        k = nonzero(rng, -3, 3)
        equation, conditions, answer = f"y' = {times(k, 'y')}", [f"y(0) = {y0}"], combo([(y0, f"exp({times(k)})")])
    elif choice == 1:
        a, b = rng.randint(1, 4), rng.randint(1, 8)
        equation, conditions = f"y' + {times(a, 'y')} = {b}", [f"y(0) = {y0}"]
        answer = combo([(Fraction(b, a), ""), (Fraction(y0) - Fraction(b, a), f"exp({times(-a)})")])
    elif choice == 2:
        w = rng.randint(1, 4)
        equation, conditions = f"y'' + {times(w * w, 'y')} = 0", [f"y(0) = {y0}", f"y'(0) = {dy0}"]
        answer = combo([(y0, f"cos({times(w)})"), (Fraction(dy0, w), f"sin({times(w)})")])
    else:
        r1, r2 = rng.sample([v for v in range(-3, 4) if v], 2)
        c1 = Fraction(dy0 - r2 * y0, r1 - r2)
        equation = combo([(1, "y''"), (-(r1 + r2), "y'"), (r1 * r2, "y")]) + " = 0"
        conditions = [f"y(0) = {y0}", f"y'(0) = {dy0}"]
        answer = combo([(c1, f"exp({times(r1)})"), (Fraction(y0) - c1, f"exp({times(r2)})")])
    given = " and ".join(f"`{c}`" for c in conditions)
    return Problem("ode", f"Solve `{equation}` with {given}; give `y(x)`.", answer,
                   {"type": "expr", "vars": ["x"]}, source=answer)


ANGLES = {"pi/6": ("1/2", "sqrt(3)/2"), "pi/4": ("sqrt(2)/2", "sqrt(2)/2"), "pi/3": ("sqrt(3)/2", "1/2")}


def physics(rng: random.Random) -> Problem:
    g = "49/5"
    v, angle = rng.choice([10, 12, 14, 20, 21]), rng.choice(sorted(ANGLES))
    sin, cos = ANGLES[angle]
    launch = (f"A projectile is launched from level ground with speed `v = {v}` at angle `theta = {angle}` above "
              f"the horizontal. Take `g = {g}` and ignore air resistance.")
    options = [
        (f"{launch} How far from the launch point does it land?", f"2*{v}**2*({sin})*({cos})/({g})"),
        (f"{launch} What is its maximum height?", f"{v}**2*({sin})**2/(2*({g}))"),
        (f"{launch} How long is it in the air?", f"2*{v}*({sin})/({g})"),
    ]
    length, height = rng.choice([1, 2, 5, 10]), rng.choice([5, 10, 20, 45])
    options += [
        (f"A simple pendulum has length `L = {length}`. Take `g = {g}`. What is its small-angle period?",
         f"2*pi*sqrt({length}/({g}))"),
        (f"A stone is dropped from rest at height `h = {height}`. Take `g = {g}` and ignore air resistance. "
         "How long does it take to reach the ground?", f"sqrt(2*{height}/({g}))"),
    ]
    text, answer = rng.choice(options)
    return Problem("physics", text, answer, {"type": "number", "vars": [], "decimals": True})


TEMPLATES = {"solve": solve, "system": system, "derivative": derivative, "definite_integral": integral,
             "antiderivative": antiderivative, "limit": limit, "simplify": simplify, "series": series,
             "eigenvalues": eigenvalues, "determinant": determinant, "ode": ode, "physics": physics}
