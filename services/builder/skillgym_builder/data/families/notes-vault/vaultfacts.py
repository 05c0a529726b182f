# --- reading the index page layout from the installed skill (python3 standard library) ---
import re

from skill_text import HEADING, clean, skill_lines

NUMBERED = re.compile(r"^\s{0,3}\d+[.)]\s+(.+)$")
INDEX_TITLE = re.compile(r"\b(index|hub|review|overview)\b.*\b(sections?|layout|structure|outline|page|note)\b", re.I)
ROLES = {"orphans": r"orphan|unlinked|isolated", "broken": r"broken|dead|missing",
         "tasks": r"task|overdue|late|due|attention", "tags": r"\btags?\b"}


def index_sections():
    lines = skill_lines()
    for position, raw in enumerate(lines):
        heading = HEADING.match(raw)
        if not heading or not INDEX_TITLE.search(clean(heading.group(2))):
            continue
        items = []
        for text in lines[position + 1:]:
            if HEADING.match(text):
                break
            numbered = NUMBERED.match(text)
            if numbered:
                items.append(re.split(r"\s+[-\u2013\u2014:]\s+|:\s", clean(numbered.group(1)))[0].strip())
        if 3 <= len(items) <= 10 and all(0 < len(i) <= 40 for i in items):
            return items
    raise SystemExit("the skill prescribes no index page layout")


def section_roles(sections):
    roles = {}
    for role, pattern in ROLES.items():
        match = next((s for s in sections if re.search(pattern, s, re.I) and s not in roles.values()), None)
        if match:
            roles[role] = match
    return roles
