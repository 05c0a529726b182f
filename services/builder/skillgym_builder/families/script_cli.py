"""Reading, without running it, how a skill's own Python script is invoked on a CSV file: the
command line its SKILL.md shows (or its argparse / ``sys.argv`` interface), where it writes its
result, which columns it reads (and as what type), and which packages it imports.

Nothing here executes skill code; the builder runs the script only in the sandbox."""

from __future__ import annotations

import ast
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillgym_builder.skillcard import SkillCard

ColumnKind = Literal["int", "float", "date", "id", "text"]
INPUT, OUTPUT = "{input}", "{output}"
MAX_SCRIPT_BYTES = 256 * 1024
MAX_SCRIPTS_BYTES = 1024 * 1024
# Import name -> distribution the task installs for a script that imports it.
INSTALLABLE = {
    "pandas": "pandas>=2.0", "numpy": "numpy", "tabulate": "tabulate", "yaml": "pyyaml", "dateutil": "python-dateutil",
    "scipy": "scipy", "openpyxl": "openpyxl", "sklearn": "scikit-learn", "statsmodels": "statsmodels",
    "matplotlib": "matplotlib", "seaborn": "seaborn", "tqdm": "tqdm", "networkx": "networkx", "pyarrow": "pyarrow",
    "polars": "polars", "duckdb": "duckdb", "rdkit": "rdkit", "Bio": "biopython", "PIL": "pillow", "lifelines": "lifelines",
    "ruptures": "ruptures", "h5py": "h5py", "xlrd": "xlrd", "jinja2": "jinja2", "rich": "rich", "click": "click",
}
_OUTPUT_FLAGS = {"-o", "--output", "--out", "--output-file", "--outfile", "--output-path", "--dest"}
_PLACEHOLDER = re.compile(r"^(?:<[^>]+>|\[[^\]]+\]|\{[^}]+\}|[A-Z][A-Z_]*)$")
_INT_NAMES = re.compile(r"(?:^|_)(?:units?|qty|quantity|count|number|num|n|pieces|items|stock|on_hand|visits|clicks)(?:$|_)", re.I)
_FLOAT_NAMES = re.compile(
    r"(?:price|amount|cost|revenue|total|value|score|rate|weight|hours|sales|spend|balance|fee|salary|budget|"
    r"duration|latency|temperature|ratio|percent|margin|profit|income|expense)", re.I)
_DATE_NAMES = re.compile(r"(?:^|_)(?:date|day|timestamp|created|updated|month)(?:$|_)|_(?:on|at)$", re.I)
_ID_NAMES = re.compile(r"(?:^|_)(?:id|sku|code|key|uuid|ref)$", re.I)
_COLUMN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ]{0,39}$")


@dataclass(frozen=True)
class Column:
    name: str
    kind: ColumnKind


@dataclass(frozen=True)
class ScriptCall:
    """How to run ``script`` (relative to the skill) on one CSV file."""

    script: str
    argv: tuple[str, ...]  # arguments after the script, with {input} and maybe {output}
    origin: str  # where the command line was read from
    output_kind: Literal["json", "text"]
    columns: tuple[Column, ...]
    packages: tuple[str, ...] = field(default=())  # requirement lines for its third-party imports
    example_stem: str = "records"
    output_suffix: str = ""  # of the result file the example writes ("" when it shows none)

    @property
    def suffix(self) -> str:
        return self.output_suffix or (".json" if self.output_kind == "json" else ".txt")

    @property
    def writes_file(self) -> bool:
        return OUTPUT in self.argv

    def command(self, script_path: str, input_path: str, output_path: str) -> list[str]:
        args = [a.replace(INPUT, input_path).replace(OUTPUT, output_path) for a in self.argv]
        return ["python3", script_path, *args]


class ScriptUnusable(Exception):
    """Why no script of the skill can be run on a generated CSV file (a typed, one-line reason)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def python_scripts(card: SkillCard) -> list[Path]:
    return sorted(p for p in card.root.rglob("*.py") if p.is_file() and not p.is_symlink()
                  and "__pycache__" not in p.parts and p.stat().st_size <= MAX_SCRIPT_BYTES)


def analyse(card: SkillCard) -> ScriptCall:
    """The first of the skill's scripts that reads a CSV file and can be invoked on one; raises
    :class:`ScriptUnusable` with the reason of the most promising candidate otherwise."""
    scripts = python_scripts(card)
    if not scripts:
        raise ScriptUnusable("no_script", "the skill ships no Python script")
    if sum(p.stat().st_size for p in scripts) > MAX_SCRIPTS_BYTES:
        raise ScriptUnusable("scripts_too_large", "the skill's scripts exceed 1 MiB")
    siblings = {p.stem for p in scripts}
    failure = ScriptUnusable("script_reads_no_csv", "none of the skill's scripts reads a CSV file")
    for path in scripts:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        if not _reads_csv(tree):
            continue
        try:
            return _call_for(card, path, tree, siblings)
        except ScriptUnusable as exc:
            failure = exc
    raise failure


def _call_for(card: SkillCard, path: Path, tree: ast.Module, siblings: set[str]) -> ScriptCall:
    rel = path.relative_to(card.root).as_posix()
    missing = sorted(m for m in _imports(tree) - siblings - set(sys.stdlib_module_names) if m not in INSTALLABLE)
    if missing:
        raise ScriptUnusable("script_imports", f"{rel} imports {', '.join(missing)}, which task environments do not install")
    packages = tuple(sorted({INSTALLABLE[m] for m in _imports(tree) if m in INSTALLABLE}))
    argv, origin, stem, suffix = _from_skill_md(card.skill_md, path.name) or _from_interface(tree, rel)
    columns = _columns(tree, card.skill_md)
    if not any(c.kind in ("int", "float") for c in columns):
        raise ScriptUnusable("script_columns", f"no numeric column {rel} reads could be told from it or SKILL.md")
    kind: Literal["json", "text"] = "json" if _writes_json(tree) and suffix in ("", ".json") else "text"
    return ScriptCall(rel, argv, origin, kind, columns, packages, stem, suffix)


def _reads_csv(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("DictReader", "reader", "read_csv"):
            return True
    return False


def _optional_imports(tree: ast.Module) -> set[int]:
    """ids of import statements inside ``try:`` blocks that catch ImportError: the script runs without them."""
    optional: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                h.type is None or any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError", "Exception")
                                      for n in ast.walk(h.type)) for h in node.handlers):
            optional |= {id(n) for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return optional


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    optional = _optional_imports(tree)
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _writes_json(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("dumps", "dump", "to_json") for n in ast.walk(tree))


def _from_skill_md(skill_md: str, script_name: str) -> tuple[tuple[str, ...], str, str, str] | None:
    """The first command line in SKILL.md that runs the script with a CSV argument."""
    lines = [span for raw in skill_md.splitlines() if script_name in raw
             for span in [*re.findall(r"`([^`]+)`", raw), raw] if script_name in span]
    for raw in lines:
        line = re.sub(r"^\s*(?:\$|>|#)?\s*", "", raw.strip().strip("`"))
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:
            continue
        at = next((i for i, t in enumerate(tokens) if t.endswith("/" + script_name) or t == script_name), None)
        if at is None or (at > 0 and not re.match(r"^(?:python3?|uv|python3\.\d+)$", Path(tokens[at - 1]).name)):
            continue
        argv = _substitute(tokens[at + 1:])
        if argv is not None:
            args = tokens[at + 1:]
            stem = next((Path(t).stem for t in args if t.lower().endswith(".csv")), "records")
            written = [args[i + 1] for i, t in enumerate(args[:-1]) if t in _OUTPUT_FLAGS or t == ">"]
            suffix = Path(written[0]).suffix.lower() if written and re.match(r"^\.[a-z]{1,5}$", Path(written[0]).suffix.lower()) else ""
            return argv, "SKILL.md example", re.sub(r"[^A-Za-z0-9_]+", "_", stem).strip("_") or "records", suffix
    return None


def _substitute(tokens: list[str]) -> tuple[str, ...] | None:
    argv: list[str] = []
    seen_input = False
    after_output_flag = False
    for token in tokens:
        if token in (">", "|", "&&", ";", "2>"):
            if token != ">":
                break
            after_output_flag = True
            continue
        if after_output_flag:
            argv.append(OUTPUT)
            after_output_flag = False
            continue
        if token in _OUTPUT_FLAGS:
            argv.append(token)
            after_output_flag = True
            continue
        if token.lower().endswith(".csv") or (not seen_input and _PLACEHOLDER.match(token) and not token.startswith("-")):
            if seen_input:
                return None
            argv.append(INPUT)
            seen_input = True
            continue
        if _PLACEHOLDER.match(token):
            return None  # another value the example leaves for the reader to fill in
        argv.append(token)
    if not seen_input:
        return None
    # ``script in.csv > out`` is the same run as writing stdout to the result file
    if argv and argv[-1] == OUTPUT and (len(argv) < 2 or argv[-2] not in _OUTPUT_FLAGS):
        argv.pop()
    return tuple(argv)


def _from_interface(tree: ast.Module, rel: str) -> tuple[tuple[str, ...], str, str, str]:
    """One positional argument (argparse with no other required option, or ``sys.argv[1]``)."""
    positional, required = 0, 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            options = {k.arg: k.value for k in node.keywords}
            if flags and not flags[0].startswith("-"):
                nargs = options.get("nargs")
                positional += 0 if isinstance(nargs, ast.Constant) and nargs.value in ("?", "*") else 1
            else:
                flag = options.get("required")
                required += int(isinstance(flag, ast.Constant) and flag.value is True)
    argv_indices = {n.slice.value for n in ast.walk(tree) if isinstance(n, ast.Subscript)
                    and isinstance(n.value, ast.Attribute) and n.value.attr == "argv"
                    and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, int)}
    if (positional == 1 and required == 0) or (positional == 0 and argv_indices == {1}):
        return (INPUT,), "argparse" if positional else "sys.argv", "records", ""
    raise ScriptUnusable("script_invocation", f"how to run {rel} on one CSV file is shown neither in SKILL.md "
                                              "nor by a single positional argument")


def _columns(tree: ast.Module, skill_md: str) -> tuple[Column, ...]:
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
    return tuple(Column(name, casts.get(name) or _kind_by_name(name)) for name in names[:12])


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
    return any(isinstance(n, ast.Attribute) and n.attr in ("DictReader", "read_csv", "iterrows", "itertuples", "reader")
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
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and _COLUMN_NAME.match(node.args[0].value)):
        return node.args[0].value
    return None


def _kind_by_name(name: str) -> ColumnKind:
    if _DATE_NAMES.search(name):
        return "date"
    if _ID_NAMES.search(name):
        return "id"
    if _INT_NAMES.search(name):
        return "int"
    if _FLOAT_NAMES.search(name):
        return "float"
    return "text"
