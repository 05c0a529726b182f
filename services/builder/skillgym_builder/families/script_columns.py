"""Which fields a skill's script reads from each record (CSV columns, JSON or YAML keys) and as
what type: subscripts and ``.get`` keys it loads (not ones it builds), typed by the conversions it
applies or by their names. Reads the script's syntax tree only; runs nothing."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

ColumnKind = Literal["int", "float", "date", "id", "text"]
_INT_NAMES = re.compile(r"(?:^|_)(?:units?|qty|quantity|count|number|num|n|pieces|items|stock|on_hand|visits|clicks)(?:$|_)", re.I)
_FLOAT_NAMES = re.compile(
    r"(?:price|amount|cost|revenue|total|value|score|rate|weight|hours|sales|spend|balance|fee|salary|budget|"
    r"duration|latency|temperature|ratio|percent|margin|profit|income|expense)", re.I)
_DATE_NAMES = re.compile(r"(?:^|_)(?:date|day|timestamp|created|updated|month)(?:$|_)|_(?:on|at)$", re.I)
_ID_NAMES = re.compile(r"(?:^|_)(?:id|sku|code|key|uuid|ref)$", re.I)
_COLUMN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ]{0,39}$")
READERS = ("DictReader", "read_csv", "iterrows", "itertuples", "reader", "load", "loads", "safe_load", "read_json")


@dataclass(frozen=True)
class Column:
    name: str
    kind: ColumnKind


def columns(tree: ast.Module, skill_md: str) -> tuple[Column, ...]:
    """Column names the script reads (subscripts and ``.get`` keys it loads, not ones it assigns),
    ordered as SKILL.md lists them, typed by the conversions the script applies or by their names."""
    casts: dict[str, ColumnKind] = {}
    read: list[str] = []
    built = _built_keys(tree)
    sources = _row_names(tree)
    for node in ast.walk(tree):
        key = _read_key(node)
        from_rows = isinstance(node, (ast.Subscript, ast.Call)) and _base_name(node) in sources
        if key and key not in read and (from_rows or key not in built):
            read.append(key)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float") and node.args:
            inner = _read_key(_cast_operand(node.args[0]))
            if inner:
                casts[inner] = "int" if node.func.id == "int" else "float"
    documented = [name for line in skill_md.splitlines() if re.search(r"\bcolumns?\b", line, re.I)
                  for name in re.findall(r"`([^`]+)`", line) if _COLUMN_NAME.match(name)]
    names = [n for n in documented if n in read] + [n for n in read if n not in documented]
    if not names:
        names = documented
    return tuple(Column(name, casts.get(name) or kind_by_name(name)) for name in names[:12])


def _cast_operand(node: ast.AST) -> ast.AST:
    """The cell a conversion reads through the usual wrappers: ``row.get("x") or 0`` for an empty
    cell and string cleanup such as ``row["x"].strip().replace(",", "")``."""
    while True:
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            node = node.values[0]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("strip", "lstrip", "rstrip", "replace", "lower", "upper")):
            node = node.func.value
        else:
            return node


def _mentions_reader(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in READERS
               for n in ast.walk(node))


def _row_names(tree: ast.Module) -> set[str]:
    """Variables holding a CSV row or frame: loop targets over a reader, names assigned from one."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and _mentions_reader(node.iter):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Assign) and _mentions_reader(node.value):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _base_name(node: ast.AST) -> str | None:
    target = node.value if isinstance(node, ast.Subscript) else getattr(node.func, "value", None) if isinstance(node, ast.Call) else None
    return target.id if isinstance(target, ast.Name) else None


def _built_keys(tree: ast.Module) -> set[str]:
    """Keys the script puts into records of its own (dict literals, subscript assignments)."""
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
              and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            keys.add(node.slice.value)
    return keys


def _read_key(node: ast.AST) -> str | None:
    if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and not isinstance(node.value, ast.Dict)
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
            and _COLUMN_NAME.match(node.slice.value)):
        return node.slice.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args
            and not (isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "environ")
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and _COLUMN_NAME.match(node.args[0].value)):
        return node.args[0].value
    return None


def kind_by_name(name: str) -> ColumnKind:
    if _DATE_NAMES.search(name):
        return "date"
    if _ID_NAMES.search(name):
        return "id"
    if _INT_NAMES.search(name):
        return "int"
    if _FLOAT_NAMES.search(name):
        return "float"
    return "text"


_COLUMN_OPTION = re.compile(r"^--(?:[\w-]*-)?(?:col|column|columns|metric|metrics|dimension|dimensions|field|value|target|"
                            r"group|group-by|by|key|label|category|date|time|period)(?:-col|-column)?$")
# Columns of a generic table for a script that takes whatever numeric columns a file has.
GENERIC = (Column("id", "id"), Column("region", "text"), Column("category", "text"), Column("units", "int"),
           Column("price", "float"), Column("score", "float"), Column("created_date", "date"))
_GENERIC_CALLS = frozenset({"select_dtypes", "corr", "describe", "dtypes", "fieldnames", "isnull", "isna"})


def option_columns(tree: ast.Module) -> tuple[Column, ...]:
    """Columns a script is told by its options' defaults (``--metric`` defaulting to ``value``,
    ``--dimension`` to ``["segment"]``): the names the generated table must have."""
    names: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        if not any(_COLUMN_OPTION.match(f) for f in flags) or default is None:
            continue
        values = default.elts if isinstance(default, (ast.List, ast.Tuple)) else [default]
        names += [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)
                  and _COLUMN_NAME.match(v.value) and v.value not in names]
    return tuple(Column(name, kind_by_name(name)) for name in names)


def generic_table(tree: ast.Module) -> bool:
    """Whether the script works on whatever columns a table has (numeric selection, correlations)."""
    return any(isinstance(n, ast.Attribute) and n.attr in _GENERIC_CALLS for n in ast.walk(tree))
