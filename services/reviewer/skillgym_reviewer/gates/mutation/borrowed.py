"""Second-look mutants of a text output made from text the agent had at hand: a line of the
skill's own files (its template, placeholders and all, or its worked example) or of the task's
inputs pasted in, and the output padded to twice its length with such lines. These are the
wrong results an agent gives that copies instead of doing the work, or that writes past a
limit; checks against copying, left-in placeholders, banned wording and length exist for
them, and no edit of the reference output alone makes one."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from skillgym_core.sandbox.workspace import read_regular_file

from skillgym_reviewer.gates.mutation.model import Mutant

_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>|\{\{[^{}\n]{1,40}\}\}|\[(?:TODO|TBD|[A-Z][A-Z _-]{2,30})\]")
_WORD = re.compile(r"[A-Za-z]{2,}")
MIN_PROSE_WORDS = 8
PAD_LINES = 40
PLACEHOLDER_LINES = 4


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _prose(line: str) -> bool:
    return len(_WORD.findall(line)) >= MIN_PROSE_WORDS


def borrowable_lines(sources: Mapping[str, str]) -> list[tuple[str, str]]:
    """(where, line) pairs worth pasting: per source, its lines holding a placeholder not seen on
    an earlier one (up to ``PLACEHOLDER_LINES``) and its longest line of prose."""
    found: list[tuple[str, str]] = []
    for where, text in sorted(sources.items()):
        seen: set[str] = set()
        taken = 0
        for number, line in enumerate(text.splitlines(), start=1):
            fresh = set(_PLACEHOLDER.findall(line)) - seen
            if fresh and taken < PLACEHOLDER_LINES:
                found.append((f"{where}:placeholder line {number}", line.rstrip()))
                seen |= fresh
                taken += 1
        lines = _lines(text)
        prose = [line for line in lines if _prose(line)]
        if prose:
            found.append((f"{where}:prose", max(prose, key=len)))
    return found


def prose_lines(sources: Mapping[str, str]) -> list[str]:
    """The lines of prose of every source, up to ``PAD_LINES``: text an agent might paste."""
    return [line for source in sources.values() for line in _lines(source) if _prose(line)][:PAD_LINES]


def borrowed_text_mutants(rel: str, text: str, sources: Mapping[str, str], skip: set[str]) -> list[Mutant]:
    """Coverage mutants of the text output ``rel``: each borrowable line of ``sources`` pasted
    after the output's first line, and the output followed by the prose lines of every source
    (up to ``PAD_LINES``). Names in ``skip`` are left out."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return []
    head, rest = lines[:1], lines[1:]
    if not head[0].endswith("\n"):
        head = [head[0] + "\n"]
    out: list[Mutant] = []
    for where, line in borrowable_lines(sources):
        content = "".join([*head, line + "\n", *rest]).encode()
        out.append(Mutant(rel, "paste_line", where, content, "shape", cover=True))
    padding = prose_lines(sources)
    if padding:
        body = text if text.endswith("\n") else text + "\n"
        out.append(Mutant(rel, "pad_text", f"{len(padding)} lines", (body + "\n".join(padding) + "\n").encode(),
                          "shape", cover=True))
    return [m for m in out if m.name not in skip and m.content != text.encode()]


MAX_SOURCE_BYTES = 256 * 1024
MAX_SOURCES = 30
_TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ""})


def text_sources(skills: Path, inputs: Mapping[str, bytes]) -> dict[str, str]:
    """The prose the agent had: the skills' text files and the task's text inputs, by a name
    that says which (``skill:<path>``, ``input:<path>``), at most ``MAX_SOURCES`` of them."""
    found: dict[str, str] = {}
    candidates: list[tuple[str, bytes]] = []
    if skills.is_dir():
        for path in sorted(skills.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.suffix.lower() in _TEXT_SUFFIXES:
                data = read_regular_file(path, max_bytes=MAX_SOURCE_BYTES)
                if data is not None:
                    candidates.append((f"skill:{path.relative_to(skills).as_posix()}", data))
    candidates += [(f"input:{rel}", data) for rel, data in sorted(inputs.items())
                   if Path(rel).suffix.lower() in _TEXT_SUFFIXES and len(data) <= MAX_SOURCE_BYTES]
    for name, data in candidates:
        try:
            found[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(found) >= MAX_SOURCES:
            break
    return found
