"""What kind of input a skill's script reads: told by the file its SKILL.md example passes, by the
name and help of its positional argument, or by how its code reads the file (a CSV reader, a JSON
or YAML loader, a walk over a directory, plain text). Reads text and syntax trees only."""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath
from typing import Literal

InputKind = Literal["csv", "tsv", "json", "yaml", "markdown", "html", "text", "log", "tree", "image", "xlsx", "docx", "pptx"]
# Kinds whose records carry fields the script reads by name.
RECORD_KINDS = frozenset({"csv", "tsv", "json", "yaml", "xlsx"})
# Office documents: binary packages the builder writes part by part (office_files.py).
OFFICE_KINDS = frozenset({"xlsx", "docx", "pptx"})
SUFFIX: dict[str, str] = {"csv": ".csv", "tsv": ".tsv", "json": ".json", "yaml": ".yaml", "markdown": ".md", "html": ".html",
                          "text": ".txt", "log": ".log", "tree": "", "image": ".png", "xlsx": ".xlsx",
                     "docx": ".docx", "pptx": ".pptx"}
NOUN: dict[str, str] = {"csv": "CSV exports", "tsv": "tab-separated exports", "json": "JSON exports",
                        "yaml": "YAML files", "markdown": "Markdown documents", "html": "HTML pages", "text": "text documents",
                        "log": "log files", "tree": "project snapshots", "image": "images",
                        "xlsx": "Excel workbooks", "docx": "Word documents", "pptx": "PowerPoint decks"}
_EXTENSIONS: dict[str, InputKind] = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".yaml": "yaml", ".yml": "yaml",
                                     ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
                                     ".txt": "text", ".log": "log", ".png": "image", ".jpg": "image", ".jpeg": "image",
                                     ".webp": "image", ".gif": "image", ".bmp": "image", ".xlsx": "xlsx", ".xlsm": "xlsx",
                                     ".docx": "docx", ".pptx": "pptx"}
_WORDS: tuple[tuple[re.Pattern[str], InputKind], ...] = (
    (re.compile(r"\bcsv\b", re.I), "csv"),
    (re.compile(r"\btsv\b|tab[- ]separated", re.I), "tsv"),
    (re.compile(r"\bjson\b", re.I), "json"),
    (re.compile(r"\bya?ml\b", re.I), "yaml"),
    (re.compile(r"\bxlsx\b|\bexcel\b|\bworkbooks?\b|\bspreadsheets?\b", re.I), "xlsx"),
    (re.compile(r"\bdocx\b|\bword (?:document|file)s?\b", re.I), "docx"),
    (re.compile(r"\bpptx\b|\bpowerpoint\b|\b(?:slide ?)?decks?\b|\bpresentation files?\b", re.I), "pptx"),
    (re.compile(r"markdown|\.md\b|\bmd[_ ]?file", re.I), "markdown"),
    (re.compile(r"\bhtml?\b|web ?page", re.I), "html"),
    (re.compile(r"\blogs?\b|log[_ ]?file", re.I), "log"),
    (re.compile(r"\b(?:dir|directory|folder|project|repo|repository|codebase|root|src|source[_ ]?dir)\b", re.I), "tree"),
    (re.compile(r"\b(?:image|img|icon|logo|photo|picture|screenshot|png|jpe?g)s?\b", re.I), "image"),
)
_TREE_CALLS = frozenset({"walk", "rglob", "iterdir", "listdir", "scandir", "glob"})
_TEXT_CALLS = frozenset({"read", "read_text", "readlines", "readline"})
_MARKDOWN_CODE = re.compile(r"\^#|#\{1,6\}|```|markdown", re.I)
_HTML_CODE = re.compile(r"<(?:html|head|body|title|h[1-6]|section|div)\b|BeautifulSoup|HTMLParser|\.html?\b", re.I)


def kind_of_token(token: str) -> InputKind | None:
    """The kind a command-line token names: by its file extension, else by the words of a placeholder."""
    suffix = PurePosixPath(token.strip("<>[]{}\"'")).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if suffix:
        return None
    return kind_from_words(re.sub(r"[_\-]", " ", token))


def kind_from_words(text: str) -> InputKind | None:
    for pattern, kind in _WORDS:
        if pattern.search(text):
            return kind
    return None


def kind_from_code(tree: ast.Module) -> InputKind | None:
    """How the script reads: a CSV reader, a JSON or YAML loader, a directory walk, plain text."""
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    office = _office_reader(tree, attrs | names)
    if office:
        return office
    if attrs & {"DictReader", "reader", "read_csv"}:
        return "tsv" if _tab_delimited(tree) else "csv"
    if "json" in names and attrs & {"load", "loads"}:
        return "json"
    if "yaml" in names and attrs & {"safe_load", "load", "safe_load_all"}:
        return "yaml"
    if "Image" in names and "open" in attrs:  # Pillow's Image.open
        return "image"
    if attrs & _TREE_CALLS or names & {"walk", "listdir"}:
        return "tree"
    if attrs & _TEXT_CALLS or _iterates_open_file(tree):
        source = ast.unparse(tree)
        if _MARKDOWN_CODE.search(source):
            return "markdown"
        if _HTML_CODE.search(source):
            return "html"
        return "log" if re.search(r"\blog", source, re.I) else "text"
    return None


def _office_reader(tree: ast.Module, called: set[str]) -> InputKind | None:
    """An Office document the script opens with its library: ``load_workbook`` (openpyxl),
    ``Document`` (python-docx), ``Presentation`` (python-pptx). pandas' ``read_excel`` counts only
    when the script reads no CSV, which is the simpler input to give it."""
    imported = {alias.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    if "load_workbook" in called and "openpyxl" in imported:
        return "xlsx"
    if "Document" in called and "docx" in imported:
        return "docx"
    if "Presentation" in called and "pptx" in imported:
        return "pptx"
    if "read_excel" in called and "read_csv" not in called:
        return "xlsx"
    return None


def opens_office(tree: ast.Module) -> bool:
    """Whether the script has any way to open an Office document (a help text's "spreadsheet" is
    not one when the code reads CSV)."""
    called = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return bool(called & {"read_excel", "ExcelFile"}) or _office_reader(tree, called) is not None


def _tab_delimited(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.keyword) and n.arg in ("delimiter", "sep") and isinstance(n.value, ast.Constant)
               and n.value.value == "\t" for n in ast.walk(tree))


def _iterates_open_file(tree: ast.Module) -> bool:
    """``for line in open(path)`` or ``with open(path) as f: for line in f``."""
    handles = {item.optional_vars.id for n in ast.walk(tree) if isinstance(n, ast.With) for item in n.items
               if _is_open(item.context_expr) and isinstance(item.optional_vars, ast.Name)}
    return any(isinstance(n, (ast.For, ast.comprehension))
               and (_is_open(n.iter) or (isinstance(n.iter, ast.Name) and n.iter.id in handles)) for n in ast.walk(tree))


def _is_open(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"


def record_container(tree: ast.Module) -> str | None:
    """The key under which a loaded JSON or YAML document holds the records the script iterates
    (``for r in data["items"]``, ``data.get("rows", [])``); None when it iterates the document itself."""
    loaded = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
              and isinstance(n.value.func, ast.Attribute) and n.value.func.attr in ("load", "loads", "safe_load")
              for t in n.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)):
            key = _key_of(node.iter, loaded)
            if key:
                return key
    return None


def _key_of(node: ast.AST, loaded: set[str]) -> str | None:
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in loaded
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
        return node.slice.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in loaded and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


_MENTION = re.compile(r"^(?:\.(?:html?|md|js|jsx|ts|tsx|mjs|json|ya?ml|css|py)|package\.json|SKILL\.md|AGENTS\.md|Dockerfile"
                      r"|[A-Za-z][\w-]{2,40}\.(?:json|ya?ml|toml|md|html?|js|jsx|ts|tsx|py|css))$")


def code_mentions(tree: ast.Module) -> tuple[str, ...]:
    """File suffixes and well-known file names a Python script looks for (``".html"``,
    ``"package.json"``), from the string constants of its code and the globs among them
    (``"**/*.tsx"``)."""
    constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return _mentioned(constants | {f".{m}" for c in constants for m in re.findall(r"\*\.(\w+)", c)})


def directory_guard(tree: ast.Module) -> bool:
    """Whether the script stops unless a path is a directory (``if not root.is_dir(): sys.exit(...)``):
    the input it is given is a folder, whatever the files in it are read with."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)):
            continue
        test = node.test.operand
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in ("is_dir", "isdir")):
            continue
        if any(_stops(statement) for statement in node.body):
            return True
    return False


def _stops(statement: ast.stmt) -> bool:
    if isinstance(statement, (ast.Raise, ast.Return)):
        return True
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call):
        return False
    if isinstance(call.func, ast.Attribute):
        return call.func.attr in ("exit", "error")
    return isinstance(call.func, ast.Name) and call.func.id in ("exit", "quit")


def shell_mentions(source: str) -> tuple[str, ...]:
    """The same for a shell script, from its words and ``*.suffix`` globs."""
    return _mentioned(set(re.findall(r"[\w.*]+", source)) | {f".{m}" for m in re.findall(r"\*\.(\w+)", source)})


def _mentioned(found: set[str]) -> tuple[str, ...]:
    return tuple(sorted(m for m in found if _MENTION.match(m)))[:8]


def _shape_of(default: ast.expr | None) -> str:
    if isinstance(default, ast.Dict):
        return "mapping"
    if isinstance(default, ast.List):
        return "list"
    if isinstance(default, ast.Constant) and default.value is not None:
        value = default.value
        return "flag" if isinstance(value, bool) else "number" if isinstance(value, int | float) else "text"
    return "value"


def document_keys(tree: ast.Module) -> dict[str, str]:
    """Keys the script reads straight off a loaded JSON or YAML document, with the shape its default
    tells (``doc.get("dependencies", {})`` is a mapping, ``doc.get("items", [])`` a list,
    ``doc.get("limit", 60)`` a number, ``doc.get("strict", False)`` a flag)."""
    loaded = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
              and isinstance(n.value.func, ast.Attribute) and n.value.func.attr in ("load", "loads", "safe_load")
              for t in n.targets if isinstance(t, ast.Name)}
    keys: dict[str, str] = {}
    for node in ast.walk(tree):
        key = _key_of(node, loaded)
        if key is None or key in keys:
            continue
        default = node.args[1] if isinstance(node, ast.Call) and len(node.args) > 1 else None
        keys[key] = _shape_of(default)
    return keys


MAX_EXEMPLAR_BYTES = 256 * 1024
MAX_EXEMPLARS = 4


def skill_exemplars(root: Path, kind: InputKind) -> tuple[str, ...]:
    """The skill's own files of the kind its script reads (the deck templates under ``assets/``),
    which inputs are varied from: a page built the way the skill builds them is what its tool is
    for. HTML only; generated records follow the fields the script reads instead."""
    if kind != "html":
        return ()
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        if (path.suffix.lower() not in (".html", ".htm") or path.is_symlink() or not path.is_file()
                or path.stat().st_size > MAX_EXEMPLAR_BYTES):
            continue
        try:
            found.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
    return tuple(found[:MAX_EXEMPLARS])
