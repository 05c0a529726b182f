"""Reading answers written in sympy syntax without evaluating them: the text is parsed by Python's
``ast`` and only whitelisted nodes (numbers, allowed names, + - * / **, calls of allowed
functions) are turned into sympy objects, under size and time limits. Then equivalence: numeric
spot checks at 30 digits, with ``simplify(a - b) == 0`` where a value cannot be evaluated."""

import ast
import math
import random
import signal
import time

import sympy

MAX_CHARS = 600
MAX_NODES = 300
MAX_INT = 10**30
MAX_POWER = 1000
MAX_BITS = 100_000
EXACT_TOL, DECIMAL_TOL = 1e-20, 1e-6
FUNCTIONS = {name: getattr(sympy, name) for name in (
    "sqrt", "exp", "log", "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "sinh", "cosh",
    "tanh", "Abs")}
CONSTANTS = {"pi": sympy.pi, "E": sympy.E, "I": sympy.I, "oo": sympy.oo}
OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
             ast.Div: lambda a, b: a / b}
DEADLINE = time.monotonic() + 100  # the whole check stays well inside the verifier's time limit


class Rejected(Exception):
    """The answer is not a closed form this checker accepts."""


class OutOfTime(BaseException):
    """Raised from a timer: a BaseException, so that no ``except Exception`` inside sympy swallows it."""


class Budget:
    """A time limit for one problem (SIGALRM interrupts sympy's pure-Python work)."""

    def __init__(self, seconds):
        self.seconds = max(0.1, min(seconds, DEADLINE - time.monotonic()))

    def __enter__(self):
        if DEADLINE - time.monotonic() <= 0:
            raise OutOfTime("out of checking time")

        def expire(signum, frame):
            raise OutOfTime("took too long to check")

        signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        return False


def parse(text, names):
    """The sympy expression ``text`` denotes, its symbols limited to ``names``."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHARS:
        raise Rejected("not a short non-empty string")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise Rejected(f"unreadable: {type(exc).__name__}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise Rejected("too large")
    return _build(tree.body, {name: sympy.Symbol(name) for name in names})


def _power(base, exponent):
    if exponent.is_Number and abs(exponent) > MAX_POWER:
        raise Rejected("exponent too large")
    if base.is_Rational and exponent.is_Integer:
        bits = max(abs(base.p).bit_length(), base.q.bit_length()) * abs(int(exponent))
        if bits > MAX_BITS:
            raise Rejected("number too large")
    return base**exponent


def _build(node, symbols):
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Rejected(f"literal {value!r} is not a number")
        if isinstance(value, int):
            if abs(value) > MAX_INT:
                raise Rejected("integer too large")
            return sympy.Integer(value)
        if not math.isfinite(value):
            raise Rejected("not a finite number")
        return sympy.Float(repr(value))
    if isinstance(node, ast.Name):
        if node.id in symbols:
            return symbols[node.id]
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise Rejected(f"unknown name {node.id}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _build(node.operand, symbols)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left, right = _build(node.left, symbols), _build(node.right, symbols)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        operator = OPERATORS.get(type(node.op))
        if operator is None:
            raise Rejected(f"operator {type(node.op).__name__} is not allowed")
        return operator(left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        function = FUNCTIONS.get(node.func.id)
        if function is None:
            raise Rejected(f"{node.func.id}(...) is not an allowed closed form")
        if len(node.args) != 1:
            raise Rejected(f"{node.func.id} takes one argument")
        return function(_build(node.args[0], symbols))
    raise Rejected(f"{type(node).__name__} is not allowed")


def value(expr, subs=None):
    """``expr`` at ``subs`` as a 30-digit complex sympy number; None if it is not a finite number."""
    result = sympy.N(expr.subs(subs) if subs else expr, 30)
    if not result.is_number or result.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    real, imag = result.as_real_imag()
    if not (real.is_finite and imag.is_finite):
        return None
    return result


def _close(a, b, tol):
    gap = abs(complex(sympy.N(a - b, 30)))
    return gap <= tol * max(1.0, abs(complex(b)))


def same(a, b, names, seed, tol=EXACT_TOL):
    """``a`` and ``b`` agree at random points (or as numbers), or their difference simplifies to 0."""
    rng = random.Random(seed)
    tried = 0
    for _ in range(12):
        subs = {sympy.Symbol(n): sympy.Rational(rng.randint(300, 2200), 1000) for n in names}
        want = value(b, subs)
        if want is None:
            continue
        got = value(a, subs)
        if got is None:
            return sympy.simplify(a - b) == 0
        if not _close(got, want, tol):
            return False
        tried += 1
        if tried >= (6 if names else 1):
            return True
    return sympy.simplify(a - b) == 0


def exact(expr):
    return not expr.has(sympy.Float)
