# --- reading the index page layout from the installed skill (python3 standard library) ---
import glob
import re

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
NUMBERED = re.compile(r"^\s{0,3}\d+[.)]\s+(.+)$")
INDEX_TITLE = re.compile(r"\b(index|hub|review|overview)\b.*\b(sections?|layout|structure|outline|page|note)\b", re.I)
ROLES = {"orphans": r"orphan|unlinked|isolated", "broken": r"broken|dead|missing",
         "tasks": r"task|overdue|late|due|attention", "tags": r"\btags?\b"}


def clean(text):
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", text)
    return re.sub(r"[*_`]+", "", text).strip()


def skill_lines():
    paths = sorted(glob.glob("/skills/*/SKILL.md"))
    if not paths:
        raise SystemExit("no skill installed under /skills")
    with open(paths[0], encoding="utf-8-sig") as handle:
        lines = handle.read().replace("\r\n", "\n").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    out, fenced = [], False
    for line in lines[start:]:
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


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
