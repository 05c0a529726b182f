"""Reading, without running it, how a skill's own script (Python, or shell where SKILL.md shows the
command) is invoked on one input: the command line its SKILL.md shows (or its argparse /
``sys.argv`` interface), the kind of file it reads, where it writes its result, which fields it
reads from records (and as what type), and which packages it imports.

Nothing here executes skill code; the builder runs the script only in the sandbox."""

from __future__ import annotations

import ast
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from skillgym_builder.families.script_columns import GENERIC, Column, columns, generic_table, option_columns
from skillgym_builder.families.script_exemplars import document_exemplar
from skillgym_builder.families.script_inputs import (
    OFFICE_KINDS,
    RECORD_KINDS,
    InputKind,
    code_mentions,
    directory_guard,
    document_keys,
    kind_from_code,
    kind_from_words,
    kind_of_token,
    opens_office,
    record_container,
    shell_mentions,
    skill_exemplars,
)
from skillgym_builder.families.script_purpose import python_purpose, shell_purpose
from skillgym_builder.skillcard import SkillCard

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
    "bs4": "beautifulsoup4", "lxml": "lxml", "defusedxml": "defusedxml", "markdown": "markdown", "toml": "toml",
    "tomli": "tomli", "chardet": "chardet", "jsonschema": "jsonschema", "docx": "python-docx", "pptx": "python-pptx",
    "pypdf": "pypdf", "PyPDF2": "PyPDF2", "jwt": "pyjwt", "tomlkit": "tomlkit", "frontmatter": "python-frontmatter",
    "markdown_it": "markdown-it-py", "xmltodict": "xmltodict", "pygments": "pygments", "packaging": "packaging",
    "regex": "regex", "pydantic": "pydantic", "dotenv": "python-dotenv", "sqlparse": "sqlparse", "pdfplumber": "pdfplumber",
    "pypdfium2": "pypdfium2",
}
_OUTPUT_FLAGS = {"-o", "--output", "--out", "--output-file", "--outfile", "--output-path", "--dest"}
# ``--output markdown`` picks a format, not a file
_FORMATS = {"json", "markdown", "md", "text", "txt", "csv", "html", "yaml", "table", "plain", "summary", "console"}
_INPUT_OPTION = re.compile(r"^--(?:input|in|file|path|dir|directory|folder|data|source|src|csv|tsv|json|ya?ml|markdown|md|"
                           r"log|logs|project|repo|root)(?:[-_](?:file|path|dir))?$")
_INPUT_FLAGS = {"-i", "--input", "--in", "--file", "--input-file", "--path", "--dir", "--source"}
_PATH_WORDS = re.compile(r"\b(?:file|path|dir|directory|folder)\b", re.IGNORECASE)
_OUTPUT_WORDS = re.compile(r"(?:^|[\s_-])(?:output|out|dest|destination|report|result|target)(?:$|[\s_-])", re.IGNORECASE)
_FOLDER_WORDS = re.compile(r"(?:^|[\s_-])(?:dir|directory|folder)(?:$|[\s_-])", re.IGNORECASE)
_MISSING_VALUES = re.compile(r"\.(?:isnull|isna|notna|notnull|fillna|dropna)\(|\bmissing[_ ](?:values?|cells?|data)\b",
                             re.IGNORECASE)
_PYTHON = re.compile(r"^(?:python3?|uv|python3\.\d+)$")
_SHELL = re.compile(r"^(?:bash|sh|zsh)$")
# Which reason to report when no script is usable: the one that got furthest.
_FAILURE_RANK = {"script_reads_no_input": 0, "script_unparsable": 1, "script_invocation": 2, "script_input_kind": 3,
                 "script_imports": 4, "script_columns": 5}
DEFAULT_STEM: dict[str, str] = {"csv": "records", "tsv": "records", "json": "records", "yaml": "config",
                                "markdown": "notes", "html": "page", "text": "document", "log": "service",
                                "tree": "project", "image": "image", "xlsx": "workbook", "docx": "report",
                                "pptx": "deck"}
_PLACEHOLDER = re.compile(r"^(?:<[^>]+>|\[[^\]]+\]|\{[^}]+\}|[A-Z][A-Z_]*)$")
# ``tool.py <subcommand> [options] <file>``: a synopsis naming no command, not a run on an input
_COMMAND_PLACEHOLDER = re.compile(r"^[<{\[]?(?:sub)?(?:command|cmd|action|operation|verb)s?[>}\]]?$", re.I)


@dataclass(frozen=True)
class Invocation:
    """A command line read from SKILL.md or the script's interface, with ``{input}`` and maybe ``{output}``."""

    argv: tuple[str, ...]
    origin: str
    stem: str = ""  # of the input file the example passes ("" when it shows a placeholder)
    suffix: str = ""  # of the result file the example writes ("" when it shows none)
    kind: InputKind | None = None  # the input kind the example or the argument's name tells


@dataclass(frozen=True)
class ScriptCall:
    """How to run ``script`` (relative to the skill) on one input of ``input_kind``."""

    script: str
    argv: tuple[str, ...]  # arguments after the script, with {input} and maybe {output}
    origin: str  # where the command line was read from
    output_kind: Literal["json", "text"]
    columns: tuple[Column, ...]  # fields of each record, for record kinds
    packages: tuple[str, ...] = field(default=())  # requirement lines for its third-party imports
    example_stem: str = "records"
    output_suffix: str = ""  # of the result file the example writes ("" when it shows none)
    input_kind: InputKind = "csv"
    interpreter: str = "python3"
    container: str | None = None  # the key holding the records of a JSON or YAML input (None: a list)
    document: tuple[tuple[str, str], ...] = ()  # keys read off a JSON or YAML document itself, with their shape
    mentions: tuple[str, ...] = ()  # file suffixes and names the script looks for in a directory
    purpose: str = ""  # what the script is for, in its author's words, without its name or options
    exemplars: tuple[str, ...] = ()  # the skill's own files (HTML) or example document (JSON) inputs are varied from
    missing_values: bool = False  # the script looks for empty cells: its tables get some

    @property
    def suffix(self) -> str:
        return self.output_suffix or (".json" if self.output_kind == "json" else ".txt")

    @property
    def writes_file(self) -> bool:
        return OUTPUT in self.argv

    def command(self, script_path: str, input_path: str, output_path: str) -> list[str]:
        args = [a.replace(INPUT, input_path).replace(OUTPUT, output_path) for a in self.argv]
        return [self.interpreter, script_path, *args]


class ScriptUnusable(Exception):
    """Why no script of the skill can be run on a generated input (a typed, one-line reason)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def skill_scripts(card: SkillCard) -> list[Path]:
    """Python and shell scripts, the ones SKILL.md names first."""
    found = [*_files(card, "*.py"), *_files(card, "*.sh")]
    return sorted(found, key=lambda p: (p.name not in card.skill_md, p.as_posix()))


def _files(card: SkillCard, pattern: str) -> list[Path]:
    return sorted(p for p in card.root.rglob(pattern) if p.is_file() and not p.is_symlink()
                  and "__pycache__" not in p.parts and not not_a_tool(p.relative_to(card.root))
                  and p.stat().st_size <= MAX_SCRIPT_BYTES)


def not_a_tool(rel: Path) -> bool:
    """The skill's own test suite (``tests/test_x.py``, ``conftest.py``) or a package marker
    (``__init__.py``, which packaging adds to every folder of a skill it ships)."""
    return (rel.name in ("conftest.py", "__init__.py") or rel.name.startswith("test_") or rel.stem.endswith("_test")
            or any(part in ("tests", "test") for part in rel.parts[:-1]))


def analyse(card: SkillCard) -> ScriptCall:
    """The first of the skill's scripts that reads an input tasks can generate and can be invoked
    on one; raises :class:`ScriptUnusable` with the reason of the most promising candidate otherwise."""
    scripts = skill_scripts(card)
    if not scripts:
        raise ScriptUnusable("no_script", "the skill ships no Python or shell script")
    if sum(p.stat().st_size for p in scripts) > MAX_SCRIPTS_BYTES:
        raise ScriptUnusable("scripts_too_large", "the skill's scripts exceed 1 MiB")
    # the skill's own modules, and the packages its scripts sit in (``scripts/office/validators/``)
    siblings = {p.stem for p in scripts} | {folder.name for p in scripts for folder in p.relative_to(card.root).parents}
    failure = ScriptUnusable("script_reads_no_input", "none of the skill's scripts reads an input file tasks can generate")
    for path in scripts:
        try:
            return _call_for(card, path, siblings)
        except ScriptUnusable as exc:
            if _FAILURE_RANK.get(exc.code, 0) > _FAILURE_RANK.get(failure.code, 0):
                failure = exc
    raise failure


def _call_for(card: SkillCard, path: Path, siblings: set[str]) -> ScriptCall:
    rel = path.relative_to(card.root).as_posix()
    if path.suffix == ".sh":
        return _shell_call(card, path, rel)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        raise ScriptUnusable("script_unparsable", f"{rel} does not parse as Python") from exc
    shown = _from_skill_md(card.skill_md, path.name, _PYTHON)
    code_kind = kind_from_code(tree)
    if shown is None and code_kind is None:
        raise ScriptUnusable("script_reads_no_input", f"{rel} reads no input file tasks can generate")
    missing = sorted(m for m in _imports(tree) - siblings - set(sys.stdlib_module_names) if m not in INSTALLABLE)
    if missing:
        raise ScriptUnusable("script_imports", f"{rel} imports {', '.join(missing)}, which task environments do not install")
    # an import the script guards (``except ImportError: print("pypdf is not installed")``) is installed where we can:
    # the script does its full work with it
    packages = tuple(sorted({INSTALLABLE[m] for m in _imports(tree, guarded=True) if m in INSTALLABLE}))
    invocation = shown or _from_interface(tree, rel)
    kind = invocation.kind or ("tree" if directory_guard(tree) else code_kind)
    if kind in OFFICE_KINDS and code_kind is not None and code_kind != kind and not opens_office(tree):
        kind = code_kind  # "the spreadsheet to check", read with csv: a CSV file
    if kind is None:
        raise ScriptUnusable("script_input_kind", f"which kind of file {rel} reads is told neither by SKILL.md nor its code")
    container = record_container(tree) if kind in ("json", "yaml") else None
    # keys read off a loaded document: the input itself, or a settings file found in an input folder
    document = tuple(document_keys(tree).items()) if kind in ("json", "yaml", "tree") and container is None else ()
    fields: tuple[Column, ...] = ()
    if kind in RECORD_KINDS:
        found = [c for c in columns(tree, card.skill_md) if c.name != container]
        found += [c for c in option_columns(tree) if c.name not in {f.name for f in found}]
        # a workbook script mostly reads cells by position: a table of the usual columns is what it gets
        if ((kind in ("csv", "tsv") and generic_table(tree)) or kind == "xlsx") and not any(c.kind in ("int", "float") for c in found):
            found += [c for c in GENERIC if c.name not in {f.name for f in found}]
        fields = tuple(found)
        if kind in ("csv", "tsv", "xlsx") and not any(c.kind in ("int", "float") for c in fields):
            raise ScriptUnusable("script_columns", f"no numeric column {rel} reads could be told from it or SKILL.md")
        if not fields:
            raise ScriptUnusable("script_columns", f"no field {rel} reads from its records could be told from it or SKILL.md")
    suffix = invocation.suffix
    output: Literal["json", "text"] = "json" if _writes_json(tree) and suffix in ("", ".json") else "text"
    exemplars = skill_exemplars(card.root, kind)
    if kind in ("json", "yaml"):
        example = document_exemplar(card.root, card.skill_md, kind, document_keys(tree), container)
        exemplars = (example,) if example else ()
    return ScriptCall(rel, invocation.argv, invocation.origin, output, fields, packages,
                      invocation.stem or DEFAULT_STEM[kind], suffix, kind, "python3", container, document,
                      code_mentions(tree), python_purpose(tree, rel), exemplars,
                      missing_values=bool(_MISSING_VALUES.search(ast.unparse(tree))))


def _shell_call(card: SkillCard, path: Path, rel: str) -> ScriptCall:
    """A shell script runs as SKILL.md shows it, on a document, a log or a directory (its code is not read)."""
    shown = _from_skill_md(card.skill_md, path.name, _SHELL)
    if shown is None:
        raise ScriptUnusable("script_invocation", f"SKILL.md shows no command line that runs {rel} on one input")
    if shown.kind is None or shown.kind in RECORD_KINDS:
        raise ScriptUnusable("script_input_kind", f"the input {rel} is shown with is not a document, log or directory")
    source = path.read_text(encoding="utf-8", errors="replace")
    return ScriptCall(rel, shown.argv, shown.origin, "text", (), (), shown.stem or DEFAULT_STEM[shown.kind],
                      shown.suffix, shown.kind, "bash", mentions=shell_mentions(source), purpose=shell_purpose(source, rel),
                      exemplars=skill_exemplars(card.root, shown.kind))


def _optional_imports(tree: ast.Module) -> set[int]:
    """ids of import statements inside ``try:`` blocks that catch ImportError: the script runs without them."""
    optional: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                h.type is None or any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError", "Exception")
                                      for n in ast.walk(h.type)) for h in node.handlers):
            optional |= {id(n) for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return optional


def _imports(tree: ast.Module, guarded: bool = False) -> set[str]:
    """Top-level names of what the script imports; those in ``try``/``except ImportError`` only with ``guarded``."""
    names: set[str] = set()
    optional = set() if guarded else _optional_imports(tree)
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


def _from_skill_md(skill_md: str, script_name: str, interpreter: re.Pattern[str]) -> Invocation | None:
    """The first command line in SKILL.md that runs the script on one input."""
    lines = [span for raw in skill_md.splitlines() if script_name in raw
             for span in [*re.findall(r"`([^`]+)`", raw), raw] if script_name in span]
    for raw in lines:
        line = re.sub(r"^\s*(?:\$|>|#)?\s*", "", raw.strip().strip("`"))
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:
            continue
        at = next((i for i, t in enumerate(tokens) if t.endswith("/" + script_name) or t == script_name), None)
        if at is None or (at > 0 and not interpreter.match(Path(tokens[at - 1]).name)):
            continue
        args = tokens[at + 1:]
        found = _substitute(args)
        if found is None:
            continue
        argv, given = found
        written = [args[i + 1] for i, t in enumerate(args[:-1]) if t in _OUTPUT_FLAGS or t == ">"]
        suffix = Path(written[0]).suffix.lower() if written and re.match(r"^\.[a-z]{1,5}$", Path(written[0]).suffix.lower()) else ""
        stem = "" if _PLACEHOLDER.match(given) or given == "." else re.sub(r"[^A-Za-z0-9_]+", "_", Path(given).stem).strip("_")
        return Invocation(argv, "SKILL.md example", stem, suffix, "tree" if given == "." else kind_of_token(given))
    return None


def _unsupported_file(token: str) -> bool:
    suffix = PurePosixPath(token).suffix.lower()
    return bool(re.match(r"^\.[a-z][a-z0-9]{1,4}$", suffix)) and kind_of_token(token) is None and suffix not in (".py", ".sh")


def _is_input(token: str, previous: str) -> bool:
    if token.startswith("-"):
        return False
    if previous in _INPUT_FLAGS:
        return True
    if previous.startswith("-") and "=" not in previous and "/" not in token and "." not in token:
        return False  # an option's value, such as ``--format json``
    return token == "." or bool(_PLACEHOLDER.match(token)) or kind_of_token(token) is not None


def _substitute(tokens: list[str]) -> tuple[tuple[str, ...], str] | None:
    """The arguments with ``{input}`` and ``{output}`` put in, and the token the input replaced."""
    argv: list[str] = []
    given = ""
    after_output_flag = False
    previous = ""
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token in (">", "|", "&&", ";", "2>"):
            if token != ">":
                break
            after_output_flag = True
            continue
        if after_output_flag:
            argv.append(OUTPUT)
            after_output_flag = False
        elif token in _OUTPUT_FLAGS and following.lower() not in _FORMATS:
            argv.append(token)
            after_output_flag = True
        elif token.startswith("["):
            break  # optional parts the example brackets
        elif not given and _PLACEHOLDER.match(token) and _COMMAND_PLACEHOLDER.match(token):
            return None
        elif not given and _unsupported_file(token):
            return None  # the script's input is a kind of file tasks do not generate (a PDF, an image)
        elif not given and _is_input(token, previous):
            argv.append(INPUT)
            given = token
        elif _PLACEHOLDER.match(token) or (given and PurePosixPath(token).suffix.lower() == PurePosixPath(given).suffix.lower() != ""):
            return None  # another value the example leaves for the reader to fill in, or a second input
        else:
            argv.append(token)
        previous = token
    if not given:
        return None
    # ``script in.csv > out`` is the same run as writing stdout to the result file
    if argv and argv[-1] == OUTPUT and (len(argv) < 2 or argv[-2] not in _OUTPUT_FLAGS):
        argv.pop()
    return tuple(argv), given


def _from_interface(tree: ast.Module, rel: str) -> Invocation:
    """One input argument: a single positional (argparse, or ``sys.argv[1]``), or an input option
    such as ``--input`` or ``--csv``, with no other required option but an output file; the
    argument's name, metavar and help may tell the kind of file it takes."""
    positional: list[str] = []
    optional_positional: list[str] = []  # ``nargs="?"`` or ``"*"``: a default the caller may replace
    required: set[str] = set()
    inputs: list[tuple[str, str]] = []  # (flag, words) of options that take the input
    named_paths: list[tuple[str, str]] = []  # required options whose help says they take a file or folder
    output_flag = ""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        options = {k.arg: k.value for k in node.keywords}
        words = " ".join([*flags, *(str(v.value) for k, v in options.items()
                                    if k in ("help", "metavar", "dest") and isinstance(v, ast.Constant))])
        if flags and not flags[0].startswith("-"):
            nargs = options.get("nargs")
            if isinstance(nargs, ast.Constant) and nargs.value in ("?", "*"):
                optional_positional.append(words)
            else:
                positional.append(words)
            continue
        flag = next((f for f in flags if f.startswith("--")), flags[0] if flags else "")
        mandatory = options.get("required")
        if isinstance(mandatory, ast.Constant) and mandatory.value is True:
            required.add(flag)
        if any(f in _OUTPUT_FLAGS for f in flags):
            output_flag = flag
        elif _INPUT_OPTION.match(flag) and options.get("action") is None:
            inputs.append((flag, words))
        elif flag in required and options.get("action") is None and _PATH_WORDS.search(words):
            named_paths.append((flag, words))
    argv_indices = _argv_subscripts(tree) - _optional_argv_indices(tree)
    writes = (output_flag, OUTPUT) if output_flag in required else ()
    names_result = len(positional) == 2 and _OUTPUT_WORDS.search(positional[1]) and not _FOLDER_WORDS.search(positional[1])
    if names_result and not _OUTPUT_WORDS.search(positional[0]) and not required:
        # ``input_file output_file``: the second is where the result goes
        return Invocation((INPUT, OUTPUT), "argparse", kind=_words_kind(positional[0]))
    if len(positional) == 1 and required <= {output_flag}:
        return Invocation((INPUT, *writes), "argparse", kind=_words_kind(positional[0]))
    if not positional and not inputs and len(named_paths) == 1:
        inputs = named_paths  # ``--component``, helped as "component file or directory path"
    if not positional and len(inputs) == 1 and required <= {inputs[0][0], output_flag}:
        return Invocation((inputs[0][0], INPUT, *writes), "argparse option", kind=_words_kind(inputs[0][1]))
    if not positional and not inputs and len(optional_positional) == 1 and required <= {output_flag}:
        # a folder or file it falls back to when none is given: the task gives one
        return Invocation((INPUT, *writes), "argparse", kind=_words_kind(optional_positional[0]))
    if not positional and not inputs and argv_indices == {1}:
        return Invocation((INPUT,), "sys.argv")
    if not positional and not inputs and argv_indices == {1, 2} and _OUTPUT_WORDS.search(" ".join(_argv_names(tree, 2))):
        return Invocation((INPUT, OUTPUT), "sys.argv")
    raise ScriptUnusable("script_invocation", f"how to run {rel} on one input is shown neither in SKILL.md "
                                              "nor by a single input argument")


def _argv_subscripts(node: ast.AST) -> set[int]:
    return {n.slice.value for n in ast.walk(node) if isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Attribute) and n.value.attr == "argv"
            and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, int)}


def _argv_names(tree: ast.Module, index: int) -> list[str]:
    """The names ``sys.argv[index]`` is assigned to (``output_path = sys.argv[2]``)."""
    return [target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and index in _argv_subscripts(node.value)
            for target in node.targets if isinstance(target, ast.Name)]


def _optional_argv_indices(tree: ast.Module) -> set[int]:
    """Arguments read only when given: ``sys.argv[2] if len(sys.argv) > 2 else None``."""
    optional: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.IfExp, ast.If)) and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len"
                and any(isinstance(a, ast.Attribute) and a.attr == "argv" for a in n.args) for n in ast.walk(node.test)):
            guarded = node.body if isinstance(node, ast.IfExp) else ast.Module(body=node.body, type_ignores=[])
            optional |= _argv_subscripts(guarded) - {1}
    return optional


def _words_kind(words: str) -> InputKind | None:
    return kind_from_words(words.replace("_", " ").replace("-", " "))
