"""Near-miss values: wrong answers a lenient comparison lets through. A number moved by under a
percent, or cut to fewer decimals; an identifier with another separator, a value in another
letter case; a hex id cut to a short prefix. Each returns ``None`` where it has nothing to change."""

from __future__ import annotations

import math
import random
import re

from skillgym_reviewer.gates.mutation.scalars import decimals

HEX_ID = re.compile(r"^[0-9a-f]{12,}$|^[0-9A-F]{12,}$")
SLUG = re.compile(r"^[a-z0-9]+(?:[-_.][a-z0-9]+)+$")
SHORT_HEX = (7, 10)  # the prefix lengths tools print ids as


def fine_nudge(value: float, rng: random.Random) -> float | None:
    """About half a percent off (at least two units of the last printed decimal), rounded like
    the original: inside any tolerance a reader would call loose, outside any exact check."""
    text = repr(value)
    if "e" in text or not math.isfinite(value):
        return None
    places = decimals(text)
    unit = 10.0**-places
    delta = max(abs(value) * 0.005, 2 * unit)
    moved = round(value + rng.choice((-1, 1)) * delta, places)
    return moved if moved != value else None


def truncated(value: float, rng: random.Random) -> float | None:
    """The fraction cut off (toward zero): a value whose decimals got lost on the way."""
    if not math.isfinite(value) or value == int(value):
        return None
    return float(math.trunc(value))


def recased(text: str, rng: random.Random) -> str | None:
    """A slug-like identifier (``fast-mode``) as a person would write it: spaces for its
    separators, its case kept. A comparison that reads the separators rejects it whatever it
    does with case (a case-only change is left to the declared ``case`` equivalence, which many
    comparisons rightly ignore)."""
    if not SLUG.match(text) or not any(ch.isalpha() for ch in text):
        return None
    return " ".join(re.split(r"[-_.]", text))


_WORDS = re.compile(r"^[A-Za-z]+(?:[' -][A-Za-z]+)*$")
_CODE = re.compile(r"^[A-Z]{8,}$")  # a sequence or a code, not a word


def other_case(text: str) -> str | None:
    """A value made of words in another letter case (``Depot North`` -> ``depot north``, ``ok`` ->
    ``OK``); None for anything else (ids, dates, e-mail addresses, paths, sequences), whose case a
    reader may rightly ignore or that has none to change."""
    if not _WORDS.match(text) or _CODE.match(text) or len(text) > 120:
        return None
    changed = text.lower() if any(ch.isupper() for ch in text) else text.upper()
    return changed if changed != text else None


def shortened_id(text: str, rng: random.Random) -> str | None:
    """A full hex id (a commit, a digest) cut to the short prefix tools print."""
    if not HEX_ID.match(text) or not any(ch.isdigit() for ch in text) or not any(ch.isalpha() for ch in text):
        return None
    lengths = [n for n in SHORT_HEX if n < len(text)]
    return text[: rng.choice(lengths)] if lengths else None
