# --- reading the skill's output convention for dates (python3 standard library) ---
import re

from skill_text import skill_lines

DATE_PATTERN = re.compile(r"`((?:YYYY|MM|DD)(?:[-./ ]?(?:YYYY|MM|DD)){2})`")
DATE_CUE = re.compile(r"\bdates?\b", re.I)
OUTPUT_CUE = re.compile(r"\b(writ\w*|output|record\w*|emit\w*|export\w*|store\w*|format\w*)\b", re.I)


def date_format():
    """The strftime pattern of the date format the skill prescribes for extracted data."""
    for line in skill_lines():
        match = DATE_PATTERN.search(line)
        if match and DATE_CUE.search(line) and OUTPUT_CUE.search(line):
            tokens = re.findall(r"YYYY|MM|DD", match.group(1))
            if sorted(tokens) == ["DD", "MM", "YYYY"]:
                return match.group(1).replace("YYYY", "%Y").replace("MM", "%m").replace("DD", "%d")
    raise SystemExit("the skill states no date format")
