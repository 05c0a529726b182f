"""External programs a skill calls: shell lines in scripts and fenced blocks, subprocess calls."""

from __future__ import annotations

import re

from skillgym_core.contracts.skill import Evidence

from skillgym_ingest.annotate.rules import anchored_finditer
from skillgym_ingest.content import SkillContent

KNOWN_BINARIES_WORDS = (
    "ffmpeg ffprobe pandoc libreoffice soffice tesseract convert magick identify docker podman kubectl "
    "helm gh git node npm npx pnpm yarn deno bun java javac mvn gradle chromium chromium-browser google- "
    "chrome playwright pdftotext pdftoppm pdfinfo qpdf gs ghostscript pdflatex xelatex lualatex latexmk "
    "dot jq yq aws gcloud az terraform systemctl journalctl nginx psql mysql sqlite3 redis-cli curl wget "
    "make cmake gcc g++ clang cargo rustc go sox whisper ollama uv poetry conda pip pip3 brew apt apt-get "
    "osascript ssh scp rsync zip unzip tar 7z exiftool imagemagick inkscape blender wkhtmltopdf mermaid "
    "mmdc d2 ruby gem php dotnet swift sqlcmd duckdb openssl ansible vagrant minikube kind nmap tshark "
    "tcpdump rg fd fzf hugo jekyll "
)
KNOWN_BINARIES = frozenset(KNOWN_BINARIES_WORDS.split())
_SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "zsh", "console", "shell-session", "terminal", "cmd"})
_SPLIT = re.compile(r"\|\|?|&&|;|\$\(|`")
_SUBPROCESS = re.compile(
    r"\b(?:subprocess\.(?:run|call|check_call|check_output|Popen)|os\.system|shutil\.which|execa|spawn|execSync|"
    r"exec)\(\s*\[?\s*[fbr]?['\"]([\w.+-]+)"
)
_SUBPROCESS_ANCHORS = ("subprocess.", "os.system", "shutil.which", "spawn", "exec")
_PREFIXES = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "xargs", "then", "do", "if", "!"})


def _command_words(line: str) -> list[str]:
    words: list[str] = []
    stripped = line.strip()
    if stripped.startswith("$ "):
        stripped = stripped[2:]
    if not stripped or stripped.startswith("#"):
        return words
    for segment in _SPLIT.split(stripped):
        tokens = segment.split()
        while tokens and (tokens[0] in _PREFIXES or "=" in tokens[0]):
            tokens.pop(0)
        if tokens:
            words.append(tokens[0].rsplit("/", 1)[-1])
    return words


_BLOCK = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*\1", re.M | re.S)
_SCRIPT_SUFFIXES = frozenset({".py", ".js", ".ts", ".mjs", ".cjs", ".rb"})
_SHELL_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".dockerfile", ".makefile"})


def external_binaries(content: SkillContent) -> tuple[list[str], list[Evidence]]:
    found: dict[str, Evidence] = {}

    def shell_lines(path: str, text: str, first_line: int) -> None:
        for number, line in enumerate(text.split("\n"), start=first_line):
            for word in _command_words(line):
                if word in KNOWN_BINARIES and word not in found:
                    found[word] = Evidence(rule="runtime.binaries.shell_command", file=path, line=number,
                                           excerpt=line.strip()[:200])

    markdown: list[tuple[str, str, int]] = []
    if content.skill_md_path:
        markdown.append((content.skill_md_path, content.body, content.parsed.body_line))
    for text_file in content.text_files:
        if text_file.suffix in {".md", ".mdx"}:
            markdown.append((text_file.path, text_file.text, 1))
        elif text_file.suffix in _SHELL_SUFFIXES:
            shell_lines(text_file.path, text_file.text, 1)
        elif text_file.suffix in _SCRIPT_SUFFIXES and "(" in text_file.text:
            for match in anchored_finditer(_SUBPROCESS, text_file.text, text_file.text, _SUBPROCESS_ANCHORS):
                word = match.group(1)
                if word in KNOWN_BINARIES and word not in found:
                    line = text_file.text.count("\n", 0, match.start()) + 1
                    found[word] = Evidence(rule="runtime.binaries.subprocess", file=text_file.path, line=line,
                                           excerpt=match.group(0)[:200])
    for path, text, offset in markdown:
        if "```" not in text and "~~~" not in text:
            continue
        for block in _BLOCK.finditer(text):
            if block.group(2).lower() in _SHELL_LANGS:
                shell_lines(path, block.group(3), offset + text.count("\n", 0, block.start(3)))
    return sorted(found), [found[name] for name in sorted(found)]
