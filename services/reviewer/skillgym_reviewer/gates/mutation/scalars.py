"""Small, plausible changes to one value: a number moved a little, an identifier changed by
one character or digit. Shared by every file kind."""

from __future__ import annotations

import random
import re

_DIGITS = re.compile(r"\d+")
_NUMBER = re.compile(r"^[-+]?\d+(\.\d+)?$")


def decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def nudge_int(value: int, rng: random.Random) -> int:
    step = rng.choice((-1, 1)) if value > 0 else 1
    return value + step


def nudge_float(value: float, rng: random.Random) -> float:
    """About 5% off (at least a few units of the last printed decimal), rounded like the original."""
    text = repr(value)
    places = 6 if "e" in text else decimals(text)
    delta = max(abs(value) * 0.05, 5 * 10.0**-places) if places else max(abs(value) * 0.05, 1.0)
    moved = value + rng.choice((-1, 1)) * delta
    return round(moved, places) if places else float(round(moved))


def nudge_number_text(text: str, rng: random.Random) -> str:
    """A numeric literal in text (``12``, ``-3.50``) nudged, keeping its decimal places."""
    places = decimals(text)
    if places == 0:
        width = len(text.lstrip("-"))
        moved = nudge_int(int(text), rng)
        return ("-" if moved < 0 else "") + str(abs(moved)).zfill(width)
    return f"{nudge_float(float(text), rng):.{places}f}"


def is_number_text(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def nudge_text(text: str, rng: random.Random) -> str:
    """An identifier or label changed the way a slip would change it: its last number moved by
    one (``step-03`` -> ``step-04``), else one letter replaced by the next (case kept)."""
    runs = list(_DIGITS.finditer(text))
    if runs:
        run = runs[-1]
        number = str(int(run.group()) + 1).zfill(len(run.group()))
        return text[: run.start()] + number + text[run.end() :]
    letters = [i for i, ch in enumerate(text) if ch.isascii() and ch.isalpha()]
    if not letters:
        return text + "x"
    index = letters[len(letters) // 2] if len(letters) < 3 else rng.choice(letters[1:])
    ch = text[index]
    base = ord("a") if ch.islower() else ord("A")
    return text[:index] + chr(base + (ord(ch) - base + 1) % 26) + text[index + 1 :]


def rename(key: str, taken: set[str]) -> str:
    """A plausible wrong name for a key: singular/plural swapped, else one character changed."""
    candidates = [key[:-1] if key.endswith("s") and len(key) > 1 else key + "s", nudge_text(key, random.Random(0))]
    for candidate in candidates:
        if candidate not in taken and candidate.casefold() != key.casefold():
            return candidate
    return key + "_2"
