# --- reading the installed skill's SKILL.md (python3 standard library) ---
import glob
import re

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def skill_root(required=True):
    """The installed skill's folder; without one, exits (or returns None when not ``required``)."""
    paths = sorted(glob.glob("/skills/*/SKILL.md"))
    if not paths:
        if required:
            raise SystemExit("no skill installed under /skills")
        return None
    return paths[0][: -len("/SKILL.md")]


def numbered_skill_lines(required=True):
    """(line number, text) of SKILL.md after the front matter and outside code fences."""
    root = skill_root(required)
    if root is None:
        return None
    with open(root + "/SKILL.md", encoding="utf-8-sig") as handle:
        lines = handle.read().replace("\r\n", "\n").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    out, fenced = [], False
    for index in range(start, len(lines)):
        if FENCE.match(lines[index]):
            fenced = not fenced
            continue
        if not fenced:
            out.append((index + 1, lines[index]))
    return out


def skill_lines(required=True):
    """SKILL.md lines after the front matter and outside code fences."""
    numbered = numbered_skill_lines(required)
    return None if numbered is None else [text for _, text in numbered]


def clean(text):
    """A line without its list marker, checkbox and inline markup."""
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", text)
    return re.sub(r"[*_`]+", "", text).strip()
