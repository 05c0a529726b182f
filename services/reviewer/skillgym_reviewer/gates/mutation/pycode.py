"""Mutants of Python source, found with ``ast`` and applied as edits to the original text (so
comments and layout survive): a comparison flipped, a numeric constant changed, a statement
replaced by ``pass``, a call swapped for its sibling (``strip`` for ``rstrip``, ``min`` for
``max``): code that still runs but answers differently. A mutant that no longer parses is
dropped."""

from __future__ import annotations

import ast
import random
from collections.abc import Callable

from skillgym_reviewer.gates.mutation.model import Mutant, pick, seeded
from skillgym_reviewer.gates.mutation.scalars import nudge_float, nudge_int

Change = tuple[str, str, str]  # operator, where, new source
FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
SIBLING_CALLS: dict[str, tuple[str, ...]] = {
    "strip": ("lstrip", "rstrip"), "lstrip": ("strip",), "rstrip": ("strip",), "lower": ("upper",),
    "upper": ("lower",), "startswith": ("endswith",), "endswith": ("startswith",), "min": ("max",), "max": ("min",),
    "any": ("all",), "all": ("any",), "floor": ("ceil",), "ceil": ("floor",),
}
SIMPLE_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Delete, ast.Raise, ast.Assert)


def _offset(lines: list[str], line: int, col: int) -> int:
    """Character offset of a (1-based line, UTF-8 byte column) position."""
    prefix = sum(len(text) for text in lines[: line - 1])
    return prefix + len(lines[line - 1].encode()[:col].decode(errors="replace"))


def _splice(source: str, node: ast.AST, new: str) -> str:
    lines = source.splitlines(keepends=True)
    start = _offset(lines, node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = _offset(lines, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    return source[:start] + new + source[end:]


def flip_comparison(tree: ast.Module, source: str, rng: random.Random) -> list[Change]:
    sites = [n for n in ast.walk(tree) if isinstance(n, ast.Compare) and len(n.ops) == 1 and n.lineno == n.end_lineno
             and type(n.ops[0]) in FLIPPED]
    changes: list[Change] = []
    for node in (sites[i] for i in pick(rng, list(sites))):
        flipped = ast.Compare(left=node.left, ops=[FLIPPED[type(node.ops[0])]()], comparators=node.comparators)
        changes.append(("flip_comparison", f"line {node.lineno}", _splice(source, node, ast.unparse(flipped))))
    return changes


def change_constant(tree: ast.Module, source: str, rng: random.Random) -> list[Change]:
    sites = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            segment = ast.get_source_segment(source, node)
            try:  # positions inside f-strings are not reliable: edit only a literal that reads back as itself
                if segment is not None and ast.literal_eval(segment) == node.value:
                    sites.append(node)
            except (ValueError, SyntaxError):
                continue
    changes: list[Change] = []
    for node in (sites[i] for i in pick(rng, list(sites))):
        value = node.value
        new = nudge_int(value, rng) if isinstance(value, int) else nudge_float(value, rng) if isinstance(
            value, float) else value
        changes.append(("change_constant", f"line {node.lineno}:{value!r}", _splice(source, node, repr(new))))
    return changes


def delete_statement(tree: ast.Module, source: str, rng: random.Random) -> list[Change]:
    lines = source.splitlines(keepends=True)
    sites = []
    for node in ast.walk(tree):
        for body in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not isinstance(body, list):
                continue
            for index, stmt in enumerate(body):
                if not isinstance(stmt, SIMPLE_STATEMENTS):
                    continue
                docstring = index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                end, end_col = stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0
                # only a statement that has its lines to itself: no other statement shares them
                alone = not lines[stmt.lineno - 1][: stmt.col_offset].strip() and not lines[end - 1][end_col:].strip()
                if not docstring and alone:
                    sites.append(stmt)
    changes: list[Change] = []
    for stmt in (sites[i] for i in pick(rng, list(sites))):
        indent = lines[stmt.lineno - 1][: stmt.col_offset]
        edited = [*lines[: stmt.lineno - 1], f"{indent}pass\n", *lines[(stmt.end_lineno or stmt.lineno) :]]
        changes.append(("delete_statement", f"line {stmt.lineno}", "".join(edited)))
    return changes


def _callee(node: ast.Call) -> tuple[ast.AST, str] | None:
    """The name node of a call's callee and its name (``x.strip(...)``: the attribute)."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.end_lineno == func.lineno:
        return func, func.attr
    if isinstance(func, ast.Name):
        return func, func.id
    return None


def swap_call(tree: ast.Module, source: str, rng: random.Random) -> list[Change]:
    """A call of a method or builtin replaced by its sibling, one site per sibling."""
    lines = source.splitlines(keepends=True)
    sites: list[tuple[ast.AST, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (callee := _callee(node)) and callee[1] in SIBLING_CALLS:
            sites += [(callee[0], callee[1], sibling) for sibling in SIBLING_CALLS[callee[1]]]
    changes: list[Change] = []
    for name_node, old, new in (sites[i] for i in pick(rng, list(sites))):
        end = _offset(lines, name_node.end_lineno, name_node.end_col_offset)  # type: ignore[attr-defined]
        if source[end - len(old) : end] != old:
            continue
        edited = source[: end - len(old)] + new + source[end:]
        changes.append(("swap_call", f"line {name_node.lineno}:{old}->{new}", edited))  # type: ignore[attr-defined]
    return changes


OPERATORS: list[Callable[[ast.Module, str, random.Random], list[Change]]] = [
    flip_comparison, change_constant, delete_statement, swap_call,
]


def python_mutants(rel: str, text: str, seed: int) -> dict[str, list[Mutant]]:
    tree = ast.parse(text)
    grouped: dict[str, list[Mutant]] = {}
    for operator in OPERATORS:
        for name, where, source in operator(tree, text, seeded(seed, rel, operator.__name__)):
            try:
                ast.parse(source)
            except SyntaxError:
                continue
            if source != text:
                grouped.setdefault(name, []).append(Mutant(rel, name, where, source.encode(), "code"))
    return grouped


def binary_mutants(rel: str, data: bytes, seed: int) -> dict[str, list[Mutant]]:
    """A flipped bit past the header, and the file cut short by a tenth."""
    if not data:
        return {}
    rng = seeded(seed, rel, "bytes")
    position = rng.randrange(min(16, len(data) // 2), len(data))
    flipped = bytearray(data)
    flipped[position] ^= 0x01
    cut = max(1, len(data) // 10)
    return {
        "flip_byte": [Mutant(rel, "flip_byte", f"byte {position}", bytes(flipped), "bytes")],
        "truncate": [Mutant(rel, "truncate", f"last {cut} bytes", data[:-cut], "bytes")],
    }
