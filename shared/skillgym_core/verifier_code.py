"""Where a verifier's own code runs the agent's code outside ``run-untrusted``, read statically.

Code the verifier runs with its own rights (a subprocess, ``os.system``, an in-process import of
the agent's module, ``exec`` of its text) can write the verdict, and what it runs in-process can
rewrite the checker itself, which no runtime guard undoes. So before any run, the verifier's own
code is read: ``test.sh`` and the Python it starts, with the test folder's modules that code
imports. A process may be started only inside a function named ``run_untrusted`` that hands the
command to the runner (the built-in rubric runner's); files the verifier only ever runs through
the runner (a harness that imports the agent's module) run confined and are not its own code."""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from skillgym_core.contracts.task import TaskDir

CONFINED_FUNCTION = "run_untrusted"
RUNNER_NAMES = ("RUN_UNTRUSTED", "run-untrusted")
SPAWNERS: dict[str, frozenset[str]] = {
    "subprocess": frozenset({"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}),
    "os": frozenset({"system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                     "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp",
                     "spawnlpe", "posix_spawn", "posix_spawnp"}),
    "pty": frozenset({"spawn", "fork"}),
    "asyncio": frozenset({"create_subprocess_exec", "create_subprocess_shell"}),
    "multiprocessing": frozenset({"Process", "Pool"}),
}
IMPORTERS: dict[str, frozenset[str]] = {
    "runpy": frozenset({"run_path", "run_module"}),
    "importlib": frozenset({"import_module"}),
    "importlib.util": frozenset({"spec_from_file_location", "module_from_spec"}),
    "importlib.machinery": frozenset({"SourceFileLoader"}),
    "ctypes": frozenset({"CDLL", "PyDLL"}),
}
DYNAMIC_BUILTINS = frozenset({"exec", "eval", "compile", "__import__"})
PATH_CHANGES = frozenset({"insert", "append", "extend"})
MAX_FILE_BYTES = 1024 * 1024
# a test.sh line that starts a program found in the agent's files, or a test runner over them
_SHELL_RUNS_AGENT = re.compile(
    r"(^|[;&|(]\s*)(?:(?:bash|sh|python3?|node|ruby|perl|source|\.)\s+(?:-\S+\s+)*(?:/app/|\./)|\./|/app/\S*\s*$"
    r"|(?:python3?\s+-m\s+)?pytest\b|npm\s+(?:test|run)\b|npx\s|go\s+test\b|cargo\s+test\b|make\b)"
)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def message(self) -> str:
        return f"{self.path}:{self.line}: {self.what} runs outside run-untrusted"


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


class _Reader(ast.NodeVisitor):
    """The calls of one module that start a process or load code, outside ``run_untrusted``."""

    def __init__(self, rel: str) -> None:
        self.rel = rel
        self.aliases: dict[str, str] = {}  # local name -> module or module.function it stands for
        self.findings: list[Finding] = []
        self.imports: set[str] = set()
        self._confined_depth = 0

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
            self.imports.add(alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and module:
            self.imports.add(module.split(".")[0])
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        confined = node.name == CONFINED_FUNCTION and any(
            name in ast.unparse(node) for name in RUNNER_NAMES)
        self._confined_depth += confined
        self.generic_visit(node)
        self._confined_depth -= confined

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _resolved(self, func: ast.AST) -> str:
        dotted = _dotted(func)
        head, _, rest = dotted.partition(".")
        if head in self.aliases:
            return self.aliases[head] + (f".{rest}" if rest else "")
        return dotted

    def visit_Call(self, node: ast.Call) -> None:
        name = self._resolved(node.func)
        module, _, function = name.rpartition(".")
        spawns = function in SPAWNERS.get(module, ()) and not self._confined_depth
        if spawns or function in IMPORTERS.get(module, ()):
            self._found(node, f"{name}()")
        elif not module and function in DYNAMIC_BUILTINS and _reads_agent_files(node):
            self._found(node, f"{function}() of the agent's text")
        elif module == "sys.path" and function in PATH_CHANGES and not all(_trusted_path(a) for a in node.args[-1:]):
            self._found(node, f"sys.path.{function}() of a folder outside the tests")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(_dotted(target.value if isinstance(target, ast.Subscript) else target) == "sys.path"
               for target in node.targets) and not _trusted_path(node.value):
            self._found(node, "an assignment to sys.path of a folder outside the tests")
        self.generic_visit(node)

    def _found(self, node: ast.AST, what: str) -> None:
        self.findings.append(Finding(self.rel, getattr(node, "lineno", 0), what))


def _reads_agent_files(call: ast.Call) -> bool:
    """Whether the code handed to exec/eval comes straight from a file read or the agent's folder
    (the verifier's own data, such as a reference it ships, may be run)."""
    if not call.args:
        return False
    text = ast.unparse(call.args[0])
    return bool(re.search(r"\bopen\(|\.read(_text|_bytes)?\(|\bapp_path\(|\bAPP\b|/app\b|\bread_\w+\(", text))


def _trusted_path(node: ast.AST) -> bool:
    """A folder the verifier ships: its own file's folder, or a literal under /tests."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == "/tests" or node.value.startswith("/tests/")
    return "__file__" in ast.unparse(node)


def _read(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _shell_entries(text: str) -> tuple[list[str], list[Finding]]:
    """The test folder's Python files ``test.sh`` starts, and its lines that run agent code."""
    entries: list[str] = []
    findings: list[Finding] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#!") else ""
        if not line:
            continue
        entries += re.findall(r"/tests/([\w./-]+\.py)\b", line)
        if any(name in line for name in RUNNER_NAMES):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            words = line.split()
        if _SHELL_RUNS_AGENT.search(" ".join(words)):
            findings.append(Finding("tests/test.sh", number, f"`{line[:80]}`"))
    return entries, findings


def unconfined_agent_code(tests: Path) -> list[Finding]:
    """Where the verifier in ``tests`` would run agent code with its own rights."""
    script = _read(tests / "test.sh")
    if script is None:
        return []
    entries, findings = _shell_entries(script)
    seen: set[str] = set()
    queue = [entry for entry in entries if not entry.startswith("../")]
    while queue:
        rel = queue.pop()
        if rel in seen:
            continue
        seen.add(rel)
        text = _read(tests / rel)
        if text is None:
            continue
        try:
            tree = ast.parse(text, filename=rel)
        except SyntaxError:
            continue  # the verifier cannot run it either: validity reports that
        reader = _Reader(f"tests/{rel}")
        reader.visit(tree)
        findings += reader.findings
        queue += [f"{name}.py" for name in reader.imports if (tests / f"{name}.py").is_file()]
    return findings


def unconfined_in_task(task: TaskDir) -> list[Finding]:
    """:func:`unconfined_agent_code` for the task's tests and each step's."""
    findings = unconfined_agent_code(task.tests)
    for step in task.steps():
        findings += unconfined_agent_code(step.tests)
    return findings
