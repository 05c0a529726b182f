"""Facts a family can only learn from the skill: the sections its report must have, the
vocabulary it classifies with, the order of its configuration layers, its rule for nulls.

An instance that uses such a fact claims the skill is needed; its instruction then points at
the skill instead of restating the fact, and its reference solution reads the skill for it.
The reference solutions carry their own copy of these readers (``data/families/common/skillfacts.py``);
``tests/builder`` checks both agree."""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillgym_builder.skillcard import SkillCard, clean_inline

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_NUMBERED = re.compile(r"^\s{0,3}\d+[.)]\s+(.+)$")
SECTION_LIST_TITLE = re.compile(r"\b(required|report)\b.*\bsections?\b|\breport (structure|layout|outline)\b", re.I)
CLASSIFY_CUE = re.compile(r"\bclassif(y|ies|ication)\b|\bfailure (classes|types|kinds|categories)\b", re.I)
LAYER_FILE = re.compile(r"`([\w.-]+\.(?:json|ya?ml|toml|env|ini))`")
NULL_DELETES = re.compile(r"\bnull\b[^.\n]*\b(delete|deletes|remove|removes|unset|unsets|drop|drops)\b", re.I)


@dataclass(frozen=True)
class Fact:
    value: object
    line: int  # 1-based line of SKILL.md it was read from

    def source(self) -> str:
        return f"SKILL.md:{self.line}"


def body_lines(skill_md: str) -> list[tuple[int, str]]:
    """(line number, text) of SKILL.md lines after the front matter and outside code fences."""
    lines = skill_md.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    out, fenced = [], False
    for index in range(start, len(lines)):
        if _FENCE.match(lines[index]):
            fenced = not fenced
            continue
        if not fenced:
            out.append((index + 1, lines[index]))
    return out


def report_sections(card: SkillCard, *, min_items: int = 3, max_items: int = 10) -> Fact | None:
    """The numbered section list under a heading like "Required Sections" or "Report structure"."""
    lines = body_lines(card.skill_md)
    for position, (number, raw) in enumerate(lines):
        heading = _HEADING.match(raw)
        if not heading or not SECTION_LIST_TITLE.search(clean_inline(heading.group(2))):
            continue
        items: list[str] = []
        for _, text in lines[position + 1 :]:
            if _HEADING.match(text):
                break
            numbered = _NUMBERED.match(text)
            if numbered:
                items.append(clean_inline(numbered.group(1)).rstrip(":"))
        if min_items <= len(items) <= max_items and all(0 < len(i) <= 60 for i in items):
            return Fact(items, number)
    return None


def _split_terms(text: str) -> list[str]:
    text = clean_inline(text).rstrip(".").strip()
    parts = [p.strip().rstrip(".") for p in re.split(r",|;|\bor\b", text)]
    return [p for p in parts if p]


def vocabulary(card: SkillCard, *, min_items: int = 4, max_items: int = 12) -> Fact | None:
    """A comma-separated class list the skill classifies with ("Classify failure: a, b, c, d")."""
    lines = body_lines(card.skill_md)
    for position, (number, raw) in enumerate(lines):
        if not CLASSIFY_CUE.search(raw):
            continue
        tail = raw.split(":", 1)[1] if ":" in raw else ""
        candidates = [(number, tail)] + [(n, t) for n, t in lines[position + 1 : position + 3]]
        for line_number, text in candidates:
            terms = _split_terms(text)
            if min_items <= len(terms) <= max_items and all(len(t.split()) <= 4 and len(t) <= 40 for t in terms):
                return Fact(terms, line_number)
    return None


def layer_order(card: SkillCard) -> Fact | None:
    """Configuration files named in the order they apply (``a.json``, then ``b.json``, ...)."""
    for number, raw in body_lines(card.skill_md):
        names = LAYER_FILE.findall(raw)
        if len(names) >= 2 and re.search(r"\border\b|\bthen\b|\bprecedence\b|\bwins?\b", raw, re.I):
            return Fact(list(dict.fromkeys(names)), number)
    return None


def null_deletes(card: SkillCard) -> Fact | None:
    """The rule that a null in a later layer deletes the key."""
    for number, raw in body_lines(card.skill_md):
        if NULL_DELETES.search(raw):
            return Fact(True, number)
    return None
