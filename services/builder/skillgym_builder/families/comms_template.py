"""The update format a communications skill prescribes, read from its SKILL.md and the Markdown
files it ships (examples/, templates/): the template's sections in order with their kinds
(progress, plans, problems, metrics), whether sections are ``Label: text`` lines or headings,
the header line it asks for, per-section sentence limits and the terms it bans.

Python standard library only: reference solutions import this very file to read the installed
skill, so the builder and the solutions cannot disagree about the format."""

from __future__ import annotations

import glob
import os
import re
from typing import Any

MAX_FILES, MAX_CHARS = 40, 200_000
LABEL_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?[*_]*([A-Za-z][A-Za-z &/'-]{1,30}?)[*_]*\s*:\s*[*_]*\s*([\[<{].*[\]>}])\s*$")
HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")
PLACEHOLDER = re.compile(r"\[[^\]]+\]|<[^>]+>|\{[^}]+\}")
ONLY_PLACEHOLDERS = re.compile(r"^\s*(?:(?:\[[^\]]+\]|<[^>]+>|\{[^}]+\}|\([^)]*\))[\s,:-]*)+$")
KINDS = (
    ("problems", re.compile(r"problem|blocker|blocked|risk|issue|concern|challenge|help", re.I)),
    ("plans", re.compile(r"plan|next|upcoming|priorit|coming|focus|roadmap|goal", re.I)),
    ("progress", re.compile(r"progress|done|shipped|accomplish|complet|highlight|\bwins?\b|deliver|this week|achiev",
                            re.I)),
    ("metrics", re.compile(r"metric|kpi|number|stats?\b|figures", re.I)),
)
REQUIRED_KINDS = ("progress", "plans", "problems")
WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
SENTENCE_LIMITS = (
    re.compile(r"\b(\d+|one|two|three|four|five|six)\s*(?:-|\u2013|\u2014|to)\s*(\d+|one|two|three|four|five|six)\s+sentences?",
               re.I),
    re.compile(r"\b(?:at most|no more than|up to|max(?:imum)?(?: of)?)\s+(\d+|one|two|three|four|five|six)\s+sentences?",
               re.I),
    re.compile(r"\b(\d+|one|two|three|four|five|six)\s+sentences?\b", re.I),
)
BAN_CUE = re.compile(r"\b(avoid|never (?:use|write|say)|do not (?:use|write|say)|don't (?:use|write|say)|banned|"
                     r"forbidden)\b", re.I)
QUOTED = re.compile(r"[\"“`']([^\"”`']{2,30})[\"”`']")


def _number(text: str) -> int:
    return WORD_NUMBERS.get(text.lower()) or int(text)


def sentence_limit(placeholder: str) -> int | None:
    """The most sentences a section's placeholder allows ("[1-3 sentences]", "at most 2 sentences")."""
    for pattern in SENTENCE_LIMITS:
        found = pattern.search(placeholder)
        if found:
            return _number(found.groups()[-1])
    return None


def kind_of(label: str) -> str:
    return next((kind for kind, pattern in KINDS if pattern.search(label)), "other")


def _header(line: str | None) -> dict[str, bool] | None:
    """What a template's header line asks for, from the wording of its placeholders."""
    if line is None:
        return None
    holders = " ".join(PLACEHOLDER.findall(line) + re.findall(r"\([^)]*\)", line)).lower()
    if not holders:
        return None
    wants = {"team": bool(re.search(r"team|project|group|squad", holders)),
             "dates": bool(re.search(r"date|week|period|day|range", holders)),
             "emoji": "emoji" in holders}
    return wants if wants["team"] or wants["dates"] else None


def _format(style: str, found: list[tuple[str, str]], header: str | None, where: str, level: int = 0
            ) -> dict[str, Any] | None:
    sections = [{"label": re.sub(r"\s+", " ", label).strip(), "kind": kind_of(label),
                 "max_sentences": sentence_limit(holder), "placeholder": holder.strip()} for label, holder in found]
    kinds = [s["kind"] for s in sections]
    if any(kinds.count(k) != 1 for k in REQUIRED_KINDS) or kinds.count("metrics") > 1:
        return None
    return {"style": style, "sections": sections, "header": _header(header), "level": level, "source": where,
            "header_placeholder": header.strip() if header and _header(header) else None}


def _label_blocks(rel: str, lines: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    run: list[tuple[str, str]] = []
    start = 0
    for index, line in enumerate([*lines, "END OF FILE"]):
        match = LABEL_LINE.match(line)
        if match:
            if not run:
                start = index
            run.append((match.group(1), match.group(2)))
            continue
        if not line.strip() and run:
            continue
        if len(run) >= 3:
            before = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), None)
            header = before if before is not None and ONLY_PLACEHOLDERS.match(before) else None
            fmt = _format("lines", run, header, f"{rel}:{start + 1}")
            if fmt:
                out.append(fmt)
        run = []
    return out


def _heading_blocks(rel: str, lines: list[str]) -> list[dict[str, Any]]:
    heads = [(i, len(m.group(1)), m.group(2)) for i, m in ((i, HEADING.match(t)) for i, t in enumerate(lines)) if m]
    holders = []
    for index, _, _ in heads:
        body = re.sub(r"^[-*+]\s+", "", next((t.strip() for t in lines[index + 1:] if t.strip()), ""))
        holders.append(body if PLACEHOLDER.fullmatch(body) else None)
    out: list[dict[str, Any]] = []
    position = 0
    while position < len(heads):
        end = position
        while end < len(heads) and holders[end] and heads[end][1] == heads[position][1]:
            end += 1
        if end - position >= 3:
            above = heads[position - 1] if position else None
            header = above[2] if above and above[1] < heads[position][1] and PLACEHOLDER.search(above[2]) else None
            run = [(heads[k][2], str(holders[k])) for k in range(position, end)]
            fmt = _format("headings", run, header, f"{rel}:{heads[position][0] + 1}", heads[position][1])
            if fmt:
                out.append(fmt)
        position = max(end, position + 1)
    return out


def banned_terms(files: dict[str, str]) -> list[str]:
    """The terms the first line that bans words ("Avoid: "synergy", "circle back"") lists."""
    for rel in _ordered(files):
        for line in files[rel].split("\n"):
            if BAN_CUE.search(line):
                terms = [t.strip().lower() for t in QUOTED.findall(line.split(":", 1)[-1])]
                if len(terms) >= 2:
                    return sorted(dict.fromkeys(terms))
    return []


def _ordered(files: dict[str, str]) -> list[str]:
    return sorted(files, key=lambda rel: (rel != "SKILL.md", rel))


def read_format(files: dict[str, str]) -> dict[str, Any] | None:
    """The first template (SKILL.md first, then the other files by path) whose sections cover
    progress, plans and problems; None when the skill prescribes no such format."""
    for rel in _ordered(files):
        lines = files[rel].replace("\r\n", "\n").split("\n")
        found = _label_blocks(rel, lines) + _heading_blocks(rel, lines)
        if found:
            chosen = min(found, key=lambda f: int(f["source"].rsplit(":", 1)[1]))
            return {**chosen, "banned": banned_terms(files)}
    return None


def skill_files(root: str) -> dict[str, str]:
    """SKILL.md and the Markdown files below it, bounded in number and size."""
    out: dict[str, str] = {}
    paths = sorted(glob.glob(os.path.join(root, "**", "*.md"), recursive=True))
    for path in paths[:MAX_FILES]:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                out[rel] = handle.read(MAX_CHARS)
    return out


def installed_format() -> dict[str, Any]:
    """The format of the skill installed under /skills; fails when it is missing."""
    roots = sorted(os.path.dirname(p) for p in glob.glob("/skills/*/SKILL.md"))
    if not roots:
        raise SystemExit("no skill installed under /skills")
    fmt = read_format(skill_files(roots[0]))
    if fmt is None:
        raise SystemExit("the installed skill prescribes no update format")
    return fmt
