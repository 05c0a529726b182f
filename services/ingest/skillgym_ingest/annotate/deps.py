"""Dependencies: what the skill declares (manifests, install lines) against what its code imports."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from typing import Any

from skillgym_core.contracts.skill import Evidence

from skillgym_ingest.annotate.rules import anchored_finditer
from skillgym_ingest.content import SkillContent

_PY_IMPORT = re.compile(r"^\s*(?:from\s+([A-Za-z_][\w]*)[\w.]*\s+import\b|import\s+([A-Za-z_][\w., ]*))", re.M)
_JS_IMPORT = re.compile(r"""(?:\brequire\(\s*['"]|\bfrom\s+['"]|\bimport\s+['"])(@?[\w.:-]+(?:/[\w.-]+)?)""")
_PIP_LINE = re.compile(r"\b(?:pip3?|uv pip|python3? -m pip)\s+install\s+([^\n`|;&]+)")
_NPM_LINE = re.compile(r"\b(?:npm|pnpm|yarn)\s+(?:install|add|i)\s+([^\n`|;&]+)")
# ``pip install x  # inside a venv``: the words of a trailing shell comment name no package
_SHELL_COMMENT = re.compile(r"(?:^|\s)#")
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# Each install pattern with the literals its matches start with (they also guard it: no literal, no match).
_INSTALL_LINES = (
    (_PIP_LINE, "runtime.deps.pip_install", ("pip", "uv pip", "python")),
    (_NPM_LINE, "runtime.deps.npm_install", ("npm", "pnpm", "yarn")),
)
# Import names whose distribution is named differently.
IMPORT_TO_DIST = {
    "pil": "pillow", "yaml": "pyyaml", "cv2": "opencv-python", "sklearn": "scikit-learn", "bs4": "beautifulsoup4",
    "docx": "python-docx", "pptx": "python-pptx", "fitz": "pymupdf", "bio": "biopython",
    "dateutil": "python-dateutil", "dotenv": "python-dotenv", "jwt": "pyjwt", "magic": "python-magic",
    "serial": "pyserial", "openssl": "pyopenssl", "crypto": "pycryptodome", "win32api": "pywin32",
    "google": "google-api-python-client", "attr": "attrs", "skimage": "scikit-image", "faiss": "faiss-cpu",
    "lightning": "lightning", "pytorch_lightning": "pytorch-lightning", "mpl_toolkits": "matplotlib",
}
_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
_NODE_BUILTINS_WORDS = (
    "fs path os http https url util child_process crypto events stream buffer zlib readline net assert "
    "process querystring timers tty worker_threads "
)
_NODE_BUILTINS = frozenset(_NODE_BUILTINS_WORDS.split())
_TEST_DIRS = frozenset({"test", "tests", "__tests__"})
_TEST_FILE = re.compile(r"^(?:test_.*\.py|.*_test\.py|conftest\.py|.*\.(?:test|spec)\.[cm]?[jt]sx?)$")


def is_test_code(path: str) -> bool:
    """Whether ``path`` is the skill's own test code (a tests folder, ``test_*.py``, ``*.spec.ts``):
    what it imports is what the skill's authors test with, not what using the skill needs."""
    *folders, name = path.lower().split("/")
    return bool(_TEST_DIRS.intersection(folders)) or _TEST_FILE.match(name) is not None


def _path_stem(path: str) -> str:
    """``PurePosixPath(path).stem`` for the clean relative paths the loader produces."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def dependencies(content: SkillContent) -> tuple[dict[str, Any], list[Evidence]]:
    declared: dict[str, Evidence] = {}
    imported: dict[str, Evidence] = {}
    test_imported: dict[str, Evidence] = {}
    local_modules = {_path_stem(f.path) for f in content.text_files} | {
        part for f in content.folder.files for part in f.path.split("/")[:-1]
    }

    def declare(name: str, file: str, line: int | None, rule: str) -> None:
        match = _REQ_NAME.match(name)
        if match and not match.group(1).startswith("-"):
            declared.setdefault(_norm(match.group(1)), Evidence(rule=rule, file=file, line=line, excerpt=name[:120]))

    docs = [(content.skill_md_path or "SKILL.md", content.body)] + [
        (f.path, f.text) for f in content.text_files if f.suffix in {".md", ".sh", ".txt", ".dockerfile"}
    ]
    compat = content.parsed.front_matter.get("compatibility")
    if isinstance(compat, str):
        docs.append((content.skill_md_path or "SKILL.md", compat))
    for path, text in docs:
        for pattern, rule_name, needles in _INSTALL_LINES:
            if not any(needle in text for needle in needles):
                continue
            for match in anchored_finditer(pattern, text, text, needles):
                line = text.count("\n", 0, match.start()) + 1
                for token in _SHELL_COMMENT.split(match.group(1), maxsplit=1)[0].split():
                    token = token.strip("\"'")
                    if token and not token.startswith("-"):
                        declare(re.split(r"[<>=!~\[@]", token)[0] or token, path, line, rule_name)
    for text_file in content.text_files:
        name = text_file.path.rsplit("/", 1)[-1].lower()
        if name.startswith("requirements") and name.endswith(".txt"):
            for number, requirement in enumerate(text_file.text.split("\n"), start=1):
                if requirement.strip() and not requirement.lstrip().startswith(("#", "-")):
                    declare(requirement, text_file.path, number, "runtime.deps.requirements_txt")
        elif name == "package.json":
            _declare_package_json(text_file.text, text_file.path, declare)
        elif name == "pyproject.toml":
            _declare_pyproject(text_file.text, text_file.path, declare)
        elif text_file.suffix == ".py":
            if "import" not in text_file.text:  # both forms of the statement contain it
                continue
            found = test_imported if is_test_code(text_file.path) else imported
            for match in _PY_IMPORT.finditer(text_file.text):
                names = [match.group(1)] if match.group(1) else [
                    n.strip().split()[0].split(".")[0] for n in match.group(2).split(",") if n.strip()
                ]
                for module in names:
                    if module and module not in _STDLIB and module not in local_modules:
                        line = text_file.text.count("\n", 0, match.start()) + 1
                        found.setdefault(_norm(IMPORT_TO_DIST.get(module.lower(), module)), Evidence(
                            rule="runtime.deps.python_import", file=text_file.path, line=line, excerpt=module))
        elif text_file.suffix in {".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx"}:
            found = test_imported if is_test_code(text_file.path) else imported
            for match in _JS_IMPORT.finditer(text_file.text):
                module = match.group(1)
                base = module.removeprefix("node:").split("/")[0]
                if module.startswith(".") or base in _NODE_BUILTINS or module.startswith("node:"):
                    continue
                package = "/".join(module.split("/")[:2]) if module.startswith("@") else base
                line = text_file.text.count("\n", 0, match.start()) + 1
                found.setdefault(_norm(package), Evidence(rule="runtime.deps.js_import", file=text_file.path,
                                                         line=line, excerpt=module))
    undeclared = sorted(name for name in imported if name not in declared)
    value = {"declared": sorted(declared), "imported": sorted(imported), "undeclared": undeclared,
             "test_imported": sorted(set(test_imported) - set(imported))}
    evidence = [declared[n] for n in sorted(declared)] + [imported[n] for n in undeclared]
    return value, evidence


def _declare_package_json(text: str, path: str, declare: Any) -> None:
    try:
        data = json.loads(text)
    except ValueError:
        return
    if isinstance(data, dict):
        for section in ("dependencies", "devDependencies", "peerDependencies"):
            deps = data.get(section)
            if isinstance(deps, dict):
                for name in deps:
                    declare(str(name), path, None, "runtime.deps.package_json")


def _declare_pyproject(text: str, path: str, declare: Any) -> None:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return
    project = data.get("project") if isinstance(data, dict) else None
    deps = project.get("dependencies") if isinstance(project, dict) else None
    for item in deps if isinstance(deps, list) else []:
        declare(str(item), path, None, "runtime.deps.pyproject")
