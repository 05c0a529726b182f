"""External programs a skill calls: what its front matter declares, shell lines in scripts and in
SKILL.md's fenced blocks, commands SKILL.md tells the agent to run inline, subprocess calls.

Python packaging tools (pip, uv, conda, ...) and language-package installs (``npm install``) set
the skill up rather than being programs it uses, so they are left out; a system package install
(``apt-get install ffmpeg``) names a program the skill needs. READMEs, references and examples
are not read: their commands are for people, or are page content."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from skillgym_core.contracts.skill import Evidence

from skillgym_ingest.annotate.rules import anchored_finditer
from skillgym_ingest.content import SkillContent

KNOWN_BINARIES_WORDS = (
    "ffmpeg ffprobe pandoc libreoffice soffice tesseract convert magick identify docker docker-compose podman "
    "kubectl helm gh git node npm npx pnpm yarn deno bun java javac mvn gradle chromium chromium-browser google- "
    "chrome playwright pdftotext pdftoppm pdfinfo qpdf gs ghostscript pdflatex xelatex lualatex latexmk "
    "dot jq yq aws gcloud az terraform systemctl journalctl nginx psql mysql sqlite3 redis-cli curl wget "
    "make cmake gcc g++ clang cargo rustc go sox whisper ollama brew apt apt-get nvidia-smi nvcc "
    "osascript ssh scp rsync zip unzip tar 7z exiftool imagemagick inkscape blender wkhtmltopdf mermaid "
    "mmdc d2 ruby gem php dotnet swift sqlcmd duckdb openssl ansible vagrant minikube kind nmap tshark "
    "tcpdump rg fd fzf hugo jekyll "
)
KNOWN_BINARIES = frozenset(KNOWN_BINARIES_WORDS.split())
# Set-up tooling, never reported: Python environment managers, and the interpreters a skill is assumed to have.
PACKAGE_TOOLS = frozenset({"pip", "pip3", "pipx", "uv", "poetry", "conda", "mamba", "micromamba"})
BASELINE_PROGRAMS = frozenset({"python", "python3", "sh", "bash", "zsh", "env"})
SYSTEM_INSTALLERS = frozenset({"brew", "apt", "apt-get", "dnf", "yum", "apk", "pacman", "port", "zypper", "snap",
                               "winget", "choco"})
LANGUAGE_INSTALLERS = frozenset({"npm", "pnpm", "yarn", "gem", "cargo", "go", "bun"})
INSTALL_VERBS = frozenset({"install", "add", "i", "ci", "-S", "get"})
# git that clones or refreshes someone else's repository sets the skill up: a script that does so
# (a harness bootstrap) uses git as a download tool, in all its lines, not as the skill's tool.
FETCH_VERBS = frozenset({"clone", "fetch", "pull", "ls-remote", "submodule"})
_SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "zsh", "console", "shell-session", "terminal", "cmd"})
_SPLIT = re.compile(r"\|\|?|&&|;|\$\(|`")
_SUBPROCESS = re.compile(
    r"\b(?:subprocess\.(?:run|call|check_call|check_output|Popen)|os\.system|shutil\.which|execa|spawn|execSync|"
    r"exec)\(\s*\[?\s*[fbr]?['\"]([\w.+-]+)"
)
_SUBPROCESS_ANCHORS = ("subprocess.", "os.system", "shutil.which", "spawn", "exec")
_PREFIXES = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "xargs", "then", "do", "if", "!"})
_BLOCK = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*\1", re.M | re.S)
# An inline span of two or more words: a candidate command.
_INLINE = re.compile(r"`(?:\$ )?([\w.+-]+)[ \t][^`\n]*`")
# An inline command counts when the line asks for it to be run, or when it is a list item on its own.
_RUN_CUE = re.compile(r"\b(?:run|rerun|re-run|execute|use|call|invoke|type|try)\b[^`]{0,30}$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+`[^`]+`[.:;]?\s*$")
_SCRIPT_SUFFIXES = frozenset({".py", ".js", ".ts", ".mjs", ".cjs", ".rb"})
_SHELL_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".dockerfile", ".makefile"})


def _segments(line: str) -> Iterator[list[str]]:
    """The words of each command on a shell line, leading ``sudo``/``env X=1``-style words dropped."""
    stripped = line.strip()
    if stripped.startswith("$ "):
        stripped = stripped[2:]
    if not stripped or stripped.startswith("#"):
        return
    for segment in _SPLIT.split(stripped):
        tokens = segment.split()
        while tokens and (tokens[0] in _PREFIXES or "=" in tokens[0]):
            tokens.pop(0)
        if tokens:
            yield tokens


def _programs(tokens: list[str]) -> list[tuple[str, str]]:
    """(program, rule) pairs a command needs: the program it runs, or what a system install adds."""
    word = tokens[0].rsplit("/", 1)[-1]
    verb = tokens[1] if len(tokens) > 1 else ""
    if word in PACKAGE_TOOLS:
        return []
    if word in SYSTEM_INSTALLERS and verb in INSTALL_VERBS:
        return [(t, "runtime.binaries.system_package") for t in tokens[2:] if t in KNOWN_BINARIES]
    if word in LANGUAGE_INSTALLERS and verb in INSTALL_VERBS:
        return []
    return [(word, "runtime.binaries.shell_command")] if word in KNOWN_BINARIES else []


def _git_verb(tokens: list[str]) -> str | None:
    """The subcommand of a ``git`` command line (``git -C dir fetch`` gives ``fetch``)."""
    if tokens[0].rsplit("/", 1)[-1] != "git":
        return None
    rest = iter(tokens[1:])
    for token in rest:
        if token in {"-C", "-c", "--git-dir", "--work-tree"}:
            next(rest, None)
        elif not token.startswith("-"):
            return token
    return None


def declared_binaries(front_matter: dict[str, Any]) -> list[str]:
    """Programs listed under ``requires.bins`` anywhere in the front matter's ``metadata``."""
    found: list[str] = []
    stack: list[tuple[Any, int]] = [(front_matter.get("metadata"), 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict) or depth > 3:
            continue
        requires = node.get("requires")
        if isinstance(requires, dict) and isinstance(requires.get("bins"), list):
            found += [str(b) for b in requires["bins"] if isinstance(b, str | int)]
        stack += [(value, depth + 1) for value in node.values()]
    return [b for b in found if b not in BASELINE_PROGRAMS and b not in PACKAGE_TOOLS]


def external_binaries(content: SkillContent) -> tuple[list[str], list[Evidence]]:
    found: dict[str, Evidence] = {}
    md_path = content.skill_md_path or "SKILL.md"

    def add(program: str, rule: str, path: str, line: int | None, excerpt: str) -> None:
        if program not in found:
            found[program] = Evidence(rule=rule, file=path, line=line, excerpt=excerpt.strip()[:200])

    def shell_lines(path: str, text: str, first_line: int) -> None:
        continued = False
        used: list[tuple[str, str, int, str]] = []
        fetching = False
        for number, line in enumerate(text.split("\n"), start=first_line):
            if not continued:  # a line after a trailing backslash holds arguments, not a command
                for tokens in _segments(line):
                    fetching = fetching or _git_verb(tokens) in FETCH_VERBS
                    used += [(program, rule, number, line) for program, rule in _programs(tokens)]
            continued = line.rstrip().endswith("\\")
        for program, rule, number, line in used:
            if not (fetching and program == "git"):
                add(program, rule, path, number, line)

    for program in declared_binaries(content.parsed.front_matter):
        add(program, "runtime.binaries.declared", md_path, None, f"metadata requires.bins: {program}")
    for text_file in content.text_files:
        if text_file.suffix in _SHELL_SUFFIXES:
            shell_lines(text_file.path, text_file.text, 1)
        elif text_file.suffix in _SCRIPT_SUFFIXES and "(" in text_file.text:
            for match in anchored_finditer(_SUBPROCESS, text_file.text, text_file.text, _SUBPROCESS_ANCHORS):
                word = match.group(1)
                if word in KNOWN_BINARIES:
                    line = text_file.text.count("\n", 0, match.start()) + 1
                    add(word, "runtime.binaries.subprocess", text_file.path, line, match.group(0))
    if content.skill_md_path:
        _skill_md_commands(content.body, content.parsed.body_line, md_path, add, shell_lines)
    return sorted(found), [found[name] for name in sorted(found)]


def _skill_md_commands(body: str, first_line: int, path: str, add: Any, shell_lines: Any) -> None:
    blocks: list[tuple[int, int]] = []
    if "```" in body or "~~~" in body:
        for block in _BLOCK.finditer(body):
            blocks.append(block.span())
            if block.group(2).lower() in _SHELL_LANGS:
                shell_lines(path, block.group(3), first_line + body.count("\n", 0, block.start(3)))
    if "`" not in body:
        return
    for span in _INLINE.finditer(body):
        word = span.group(1)
        if word not in KNOWN_BINARIES and word not in SYSTEM_INSTALLERS:
            continue
        if any(start <= span.start() < end for start, end in blocks):
            continue
        line_start = body.rfind("\n", 0, span.start()) + 1
        line_end = body.find("\n", span.end())
        line = body[line_start : line_end if line_end != -1 else len(body)]
        if not (_RUN_CUE.search(body[line_start : span.start()]) or _LIST_ITEM.match(line)):
            continue
        number = first_line + body.count("\n", 0, span.start())
        for program, rule in _programs(span.group(0).strip("`").removeprefix("$ ").split()):
            add(program, rule.replace("shell_command", "inline_command"), path, number, line)
