"""Solution helper (python3 standard library): read the installed skill's SKILL.md the way a
careful solver would: sections, their lines and line numbers, outside code fences."""

import glob
import re

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def clean(text):
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", text)
    return re.sub(r"[*_`]+", "", text).strip()


def skill_file():
    return sorted(glob.glob("/skills/*/SKILL.md"))[0]


def index_lines(path=None):
    """Cleaned body line -> (section heading, 1-based line number); first occurrence wins."""
    with open(path or skill_file(), encoding="utf-8-sig") as handle:
        lines = handle.read().split("\n")
    body_start = 0
    if lines and lines[0].strip() == "---":
        body_start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    index, section, fenced = {}, None, False
    for number, raw in enumerate(lines, start=1):
        if number <= body_start:
            continue
        if re.match(r"^\s*(```|~~~)", raw):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = HEADING.match(raw)
        if match:
            section = clean(match.group(2))
        elif section and clean(raw):
            index.setdefault(clean(raw), (section, number))
    return index
