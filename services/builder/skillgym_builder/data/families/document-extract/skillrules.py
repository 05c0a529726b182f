# --- reading the skill's output convention for dates (python3 standard library) ---
import glob
import re

FENCE = re.compile(r"^\s*(```|~~~)")
DATE_PATTERN = re.compile(r"`((?:YYYY|MM|DD)(?:[-./ ]?(?:YYYY|MM|DD)){2})`")
DATE_CUE = re.compile(r"\bdates?\b", re.I)
OUTPUT_CUE = re.compile(r"\b(writ\w*|output|record\w*|emit\w*|export\w*|store\w*|format\w*)\b", re.I)


def skill_lines():
    """SKILL.md lines after the front matter and outside code fences; fails without the skill."""
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


def date_format():
    """The strftime pattern of the date format the skill prescribes for extracted data."""
    for line in skill_lines():
        match = DATE_PATTERN.search(line)
        if match and DATE_CUE.search(line) and OUTPUT_CUE.search(line):
            tokens = re.findall(r"YYYY|MM|DD", match.group(1))
            if sorted(tokens) == ["DD", "MM", "YYYY"]:
                return match.group(1).replace("YYYY", "%Y").replace("MM", "%m").replace("DD", "%d")
    raise SystemExit("the skill states no date format")
