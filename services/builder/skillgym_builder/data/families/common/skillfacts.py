# --- reading the skill (python3 standard library) ---
import re

from skill_text import HEADING, clean, skill_lines

NUMBERED = re.compile(r"^\s{0,3}\d+[.)]\s+(.+)$")
SECTION_LIST_TITLE = re.compile(r"\b(required|report)\b.*\bsections?\b|\breport (structure|layout|outline)\b", re.I)
CLASSIFY_CUE = re.compile(r"\bclassif(y|ies|ication)\b|\bfailure (classes|types|kinds|categories)\b", re.I)
LAYER_FILE = re.compile(r"`([\w.-]+\.(?:json|ya?ml|toml|env|ini))`")
NULL_DELETES = re.compile(r"\bnull\b[^.\n]*\b(delete|deletes|remove|removes|unset|unsets|drop|drops)\b", re.I)


def report_sections():
    lines = skill_lines()
    for position, raw in enumerate(lines):
        heading = HEADING.match(raw)
        if not heading or not SECTION_LIST_TITLE.search(clean(heading.group(2))):
            continue
        items = []
        for text in lines[position + 1:]:
            if HEADING.match(text):
                break
            numbered = NUMBERED.match(text)
            if numbered:
                items.append(clean(numbered.group(1)).rstrip(":"))
        if 3 <= len(items) <= 10 and all(0 < len(i) <= 60 for i in items):
            return items
    return None


def split_terms(text):
    text = clean(text).rstrip(".").strip()
    return [p.strip().rstrip(".") for p in re.split(r",|;|\bor\b", text) if p.strip().rstrip(".")]


def vocabulary():
    lines = skill_lines()
    for position, raw in enumerate(lines):
        if not CLASSIFY_CUE.search(raw):
            continue
        tail = raw.split(":", 1)[1] if ":" in raw else ""
        for text in [tail, *lines[position + 1:position + 3]]:
            terms = split_terms(text)
            if 4 <= len(terms) <= 12 and all(len(t.split()) <= 4 and len(t) <= 40 for t in terms):
                return terms
    return None


def layer_order():
    for raw in skill_lines():
        names = LAYER_FILE.findall(raw)
        if len(names) >= 2 and re.search(r"\border\b|\bthen\b|\bprecedence\b|\bwins?\b", raw, re.I):
            return list(dict.fromkeys(names))
    return None


def null_deletes():
    return any(NULL_DELETES.search(raw) for raw in skill_lines())
