# --- reading the finance policy from the installed skill (python3 standard library) ---
import re
from decimal import Decimal

from skill_text import HEADING, clean, skill_lines

AMOUNT = r"\$\s?(\d[\d,]*(?:\.\d{1,2})?)"
RECEIPT_RULE = re.compile(r"\breceipts?\b.*?\b(?:over|above|exceeding|more than|greater than)\s+" + AMOUNT, re.I)
LIMIT_HEADING = re.compile(r"\blimits?\b", re.I)
STAGE_HEADING = re.compile(r"\bstages?\b.*\b(?:probabilit|weight)|\b(?:probabilit|weight)\w*\b.*\bstages?\b", re.I)
NAME = r"^\|?\s*([A-Za-z][A-Za-z &/]*[A-Za-z])\s*(?:\||:|\u2014|\u2013|-)\s*"
LIMIT_ROW = re.compile(NAME + AMOUNT)
STAGE_ROW = re.compile(NAME + r"(\d{1,3}(?:\.\d+)?)\s*%")


def receipt_threshold():
    for raw in skill_lines():
        found = RECEIPT_RULE.search(clean(raw))
        if found:
            return Decimal(found.group(1).replace(",", ""))
    return None


def _table(heading, row, keep):
    lines = skill_lines()
    for position, raw in enumerate(lines):
        title = HEADING.match(raw)
        if not title or not heading.search(clean(title.group(2))):
            continue
        items = {}
        for text in lines[position + 1:]:
            if HEADING.match(text):
                break
            found = row.match(clean(text))
            if found and keep(Decimal(found.group(2).replace(",", ""))):
                items[found.group(1).strip()] = Decimal(found.group(2).replace(",", ""))
        if len(items) >= 2:
            return items
    return None


def category_limits():
    """{category: per-claim limit in USD} from a "limits" section."""
    return _table(LIMIT_HEADING, LIMIT_ROW, lambda value: value > 0)


def stage_probabilities():
    """{open stage: win probability in percent}; stages at 0% or 100% are closed ones."""
    return _table(STAGE_HEADING, STAGE_ROW, lambda value: 0 < value < 100)
