"""A small, dependency-free English detector for skill prose.

Scores text by the share of distinctly English function words among its words, scaled by
the share of letters that are ASCII. Technical Markdown has fewer function words than
prose, so the scale saturates at 15%."""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_ENGLISH_WORDS = (
    "the and of to is for with that this you are be it on as use when if from by or an your will can not "
    "should each which into all have has was were been how what where then than these those they their "
    "them we our its there must do does only any also more most such other about after before using used "
    "make sure first next run file files output input following example see need needs "
)
_ENGLISH = frozenset(_ENGLISH_WORDS.split())
SATURATION = 0.15


@dataclass(frozen=True)
class LanguageGuess:
    language: str
    score: float
    words: int


def detect_english(text: str, limit: int = 20000) -> LanguageGuess:
    return english_from_words(_WORD.findall(text[:limit].lower()))


def english_from_words(words: list[str]) -> LanguageGuess:
    """Same score from words already split and lower-cased."""
    if not words:
        return LanguageGuess("unknown", 0.0, 0)
    joined = "".join(words)
    letters = len(joined)
    ascii_letters = letters if joined.isascii() else sum(1 for ch in joined if ch.isascii())
    english_words = sum(map(_ENGLISH.__contains__, words))
    score = min(1.0, english_words / len(words) / SATURATION) * (ascii_letters / letters)
    return LanguageGuess("en" if score >= 0.5 else "other", round(score, 3), len(words))
