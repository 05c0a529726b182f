"""Mutants of plain text and Markdown: a line dropped, duplicated or swapped with its
neighbour, one number or identifier changed, and for Markdown a whole section dropped,
duplicated or swapped with its sibling. Blank lines are never the target."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable

from skillgym_reviewer.gates.mutation.model import Effect, Mutant, pick, seeded
from skillgym_reviewer.gates.mutation.nearmiss import shortened_id
from skillgym_reviewer.gates.mutation.scalars import nudge_number_text, nudge_text

Lines = list[str]  # with their line endings
Change = tuple[str, str, Lines, Effect]
_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w.])")
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_-]*[A-Za-z0-9_]\b")
_HEX = re.compile(r"\b[0-9a-fA-F]{12,}\b")
_HEADING = re.compile(r"^(#{1,6})\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")
# a list item's marker and checkbox (either may stand alone), then its first word and the space after it
_ITEM_START = re.compile(
    r"^(\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|\[[ xX]\]\s+))(\**[A-Za-z][\w'-]*\**\s+)(?=\S)")


def _content(lines: Lines) -> list[int]:
    return [i for i, line in enumerate(lines) if line.strip()]


def _ended(line: str) -> str:
    return line if line.endswith("\n") else line + "\n"


def drop_line(lines: Lines, rng: random.Random) -> list[Change]:
    sites = _content(lines)
    return [("drop_line", f"line {s + 1}", lines[:s] + lines[s + 1 :], "shape") for s in (sites[i] for i in pick(rng, list(sites)))]


def duplicate_line(lines: Lines, rng: random.Random) -> list[Change]:
    sites = _content(lines)
    return [("duplicate_line", f"line {s + 1}", [*lines[:s], _ended(lines[s]), *lines[s:]], "shape")
            for s in (sites[i] for i in pick(rng, list(sites)))]


def swap_lines(lines: Lines, rng: random.Random) -> list[Change]:
    content = _content(lines)
    pairs = [(a, b) for a, b in itertools.pairwise(content) if lines[a].strip() != lines[b].strip()]
    changes: list[Change] = []
    for a, b in (pairs[i] for i in pick(rng, list(pairs), 1)):  # one: every swap asks whether the order counts
        swapped = list(lines)
        swapped[a], swapped[b] = lines[b].rstrip("\r\n") + _eol(lines[a]), lines[a].rstrip("\r\n") + _eol(lines[b])
        changes.append(("swap_lines", f"lines {a + 1}-{b + 1}", swapped, "order"))
    return changes


def _eol(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _token_change(lines: Lines, rng: random.Random, pattern: re.Pattern[str], operator: str,
                  change: Callable[[str, random.Random], str]) -> list[Change]:
    sites = [(i, m.start(), m.end()) for i, line in enumerate(lines) for m in pattern.finditer(line)]
    changes: list[Change] = []
    for i, start, end in (sites[k] for k in pick(rng, list(sites))):
        line = lines[i]
        new = change(line[start:end], rng)
        if new != line[start:end]:
            changed = [*lines[:i], line[:start] + new + line[end:], *lines[i + 1 :]]
            changes.append((operator, f"line {i + 1}:{line[start:end]}", changed, "value"))
    return changes


def change_number(lines: Lines, rng: random.Random) -> list[Change]:
    return _token_change(lines, rng, _NUMBER, "change_number", nudge_number_text)


def change_identifier(lines: Lines, rng: random.Random) -> list[Change]:
    return _token_change(lines, rng, _IDENTIFIER, "change_identifier", nudge_text)


def shorten_id(lines: Lines, rng: random.Random) -> list[Change]:
    """A full hex id (a commit, a digest) in the text cut to a short prefix."""
    return _token_change(lines, rng, _HEX, "shorten_id", lambda token, r: shortened_id(token, r) or token)


def sections(lines: Lines) -> list[tuple[int, int, int]]:
    """Markdown sections as (level, first line, end line), headings inside code fences ignored."""
    heads: list[tuple[int, int]] = []
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line)):
            heads.append((len(m.group(1)), i))
    found = []
    for n, (level, start) in enumerate(heads):
        end = next((s for lvl, s in heads[n + 1 :] if lvl <= level), len(lines))
        found.append((level, start, end))
    return found


def _title(lines: Lines, start: int) -> str:
    return lines[start].strip().lstrip("#").strip()[:40]


def section_changes(lines: Lines, rng: random.Random) -> list[Change]:
    found = sections(lines)
    changes: list[Change] = []
    for _level, start, end in (found[i] for i in pick(rng, list(found), 1)):
        body = [*lines[start:end]]
        body[-1] = _ended(body[-1])
        changes.append(("drop_section", f"section {_title(lines, start)!r}", lines[:start] + lines[end:], "shape"))
        changes.append(("duplicate_section", f"section {_title(lines, start)!r}", [*lines[:end], *body, *lines[end:]], "shape"))
    siblings = [(a, b) for a, b in itertools.pairwise(found) if a[0] == b[0] and a[2] == b[1]]
    for first, second in (siblings[i] for i in pick(rng, list(siblings), 1)):
        head, tail = [*lines[first[1] : first[2]]], [*lines[second[1] : second[2]]]
        tail[-1], head[-1] = _ended(tail[-1]), head[-1].rstrip("\r\n") + _eol(lines[second[2] - 1])
        swapped = [*lines[: first[1]], *tail, *head, *lines[second[2] :]]
        changes.append(("swap_sections", f"sections {_title(lines, first[1])!r}<->{_title(lines, second[1])!r}", swapped, "order"))
    return changes


LINE_OPERATORS: list[Callable[[Lines, random.Random], list[Change]]] = [
    drop_line, duplicate_line, swap_lines, change_number, change_identifier, shorten_id,
]


def text_mutants(rel: str, text: str, seed: int, *, markdown: bool = False) -> dict[str, list[Mutant]]:
    lines = text.splitlines(keepends=True)
    operators = [*LINE_OPERATORS, section_changes] if markdown else LINE_OPERATORS
    grouped: dict[str, list[Mutant]] = {}
    for operator in operators:
        for name, where, changed, effect in operator(lines, seeded(seed, rel, operator.__name__)):
            content = "".join(changed)
            if content != text:
                grouped.setdefault(name, []).append(Mutant(rel, name, where, content.encode(), effect))
    return grouped


def every_line_dropped(rel: str, text: str, skip: set[str], limit: int) -> list[Mutant]:
    """Coverage mutants for a second look: each content line dropped in turn (up to ``limit``,
    leaving out names in ``skip``), so a rubric item that no drawn mutant made fail gets a
    chance at every line before it is called one that accepts anything."""
    lines = text.splitlines(keepends=True)
    out = []
    for s in _content(lines):
        mutant = Mutant(rel, "drop_line", f"line {s + 1}", "".join(lines[:s] + lines[s + 1 :]).encode(), "shape",
                        cover=True)
        if mutant.name not in skip:
            out.append(mutant)
    return out[:limit]


def every_item_reworded(rel: str, text: str, skip: set[str], limit: int) -> list[Mutant]:
    """Coverage mutants for a second look: each list item with its first word left out in turn
    ("Add tests for the parser" -> "tests for the parser"), so a check of how items are worded
    (an action first, a label first) meets an item worded otherwise."""
    lines = text.splitlines(keepends=True)
    out = []
    for s, line in enumerate(lines):
        if (match := _ITEM_START.match(line)) is None:
            continue
        reworded = match.group(1) + line[match.end():]
        mutant = Mutant(rel, "reword_item", f"line {s + 1}", "".join([*lines[:s], reworded, *lines[s + 1 :]]).encode(),
                        "value", cover=True)
        if mutant.name not in skip:
            out.append(mutant)
    return out[:limit]


_MARKER = re.compile(r"^\s*(?:#{1,6}\s+|(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|>\s*)")
RUN_ON_CHARS = 2000


def every_line_run_on(rel: str, text: str, skip: set[str], limit: int, filler: list[str]) -> list[Mutant]:
    """Coverage mutants for a second look: each content line (not a heading) followed, on the same
    line, by the text of the output's other content lines and then ``filler`` (prose the agent
    had at hand), as a writer who puts everything in one paragraph would; a limit on the
    sentences or words of one part meets a part past it."""
    lines = text.splitlines(keepends=True)
    content = [i for i in _content(lines) if not _HEADING.match(lines[i]) and not _FENCE.match(lines[i])]
    out = []
    for s in content:
        parts = [_MARKER.sub("", lines[i]).strip() for i in content if i != s] + [line.strip() for line in filler]
        others = " ".join(parts)[:RUN_ON_CHARS]
        if not others:
            continue
        joined = lines[s].rstrip("\r\n") + " " + others + (_eol(lines[s]) or "\n")
        mutant = Mutant(rel, "run_on", f"line {s + 1}", "".join([*lines[:s], joined, *lines[s + 1 :]]).encode(),
                        "shape", cover=True)
        if mutant.name not in skip:
            out.append(mutant)
    return out[:limit]
