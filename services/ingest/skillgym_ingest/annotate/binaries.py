"""External programs a skill calls: shell lines in scripts and fenced blocks, subprocess calls."""

from __future__ import annotations

import re

from skillgym_core.contracts.skill import Evidence

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
_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
_SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "zsh", "console", "shell-session", "terminal", "cmd"})
_SPLIT = re.compile(r"\|\|?|&&|;|\$\(|`")
_SUBPROCESS = re.compile(
    r"\b(?:subprocess\.(?:run|call|check_call|check_output|Popen)|os\.system|shutil\.which|execa|spawn|execSync|"
    r"exec)\(\s*\[?\s*[fbr]?['\"]([\w.+-]+)"
)
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


def external_binaries(content: SkillContent) -> tuple[list[str], list[Evidence]]:
    found: dict[str, Evidence] = {}

    def note(word: str, file: str, line: int, excerpt: str, rule: str) -> None:
        if word in KNOWN_BINARIES and word not in found:
            found[word] = Evidence(rule=rule, file=file, line=line, excerpt=excerpt.strip()[:200])

    documents: list[tuple[str, str, int, bool]] = []
    if content.skill_md_path:
        documents.append((content.skill_md_path, content.body, content.parsed.body_line, True))
    for text_file in content.text_files:
        suffix = text_file.suffix
        if suffix in {".md", ".mdx"}:
            documents.append((text_file.path, text_file.text, 1, True))
        elif suffix in {".sh", ".bash", ".zsh", ".dockerfile", ".makefile"}:
            documents.append((text_file.path, text_file.text, 1, False))
        elif suffix in {".py", ".js", ".ts", ".mjs", ".cjs", ".rb"}:
            for number, line in enumerate(text_file.text.split("\n"), start=1):
                if "(" in line:
                    for match in _SUBPROCESS.finditer(line):
                        note(match.group(1), text_file.path, number, line, "runtime.binaries.subprocess")
    for path, text, offset, markdown in documents:
        in_shell = not markdown
        for number, line in enumerate(text.split("\n"), start=offset):
            fence = _FENCE.match(line) if markdown else None
            if fence:
                in_shell = not in_shell and fence.group(2).lower() in _SHELL_LANGS
                continue
            if in_shell:
                for word in _command_words(line):
                    note(word, path, number, line, "runtime.binaries.shell_command")
    return sorted(found), [found[name] for name in sorted(found)]
