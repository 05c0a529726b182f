"""A small, dependency-free English detector for skill prose.

Scores text by the share of distinctly English function words among its words, scaled by
the share of letters that are ASCII. Technical Markdown has fewer function words than
prose, so the scale saturates at 15%. Text in another Latin-script language (Spanish, French,
German, Portuguese, Italian) has ASCII letters too: where that language's own function words
outnumber the English ones, the score is scaled down by their share. The words scored are the
prose's (see :func:`prose_only`): code, commands and paths carry no language."""

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
# function words of other Latin-script languages that are not English words too
_OTHER_WORDS = (
    "de la que el los del las por para con una su es como pero sus este esta cuando muy sin sobre también hasta "
    "hay donde desde todo durante todos les otros ese eso ellos esto antes algunos unos otro otras otra tanto "
    "estos mucho nada muchos cual poco ella estar estas algo puede debe cada según mediante "
    "le les des du une est et que qui dans pour pas sur au avec ce il elle sont ou par plus mais ses leur cette "
    "été être nous vous ont aux sans comme "
    "der die das und ist nicht ein eine zu den mit sich auf für im dem von werden wird wenn auch oder bei nach "
    "aus noch wie sie ich wir ihr diese dieser "
    "não os um uma mais foi ao das tem seu sua ser muito há nos já está só pelo pela até isso entre era depois "
    "sem mesmo aos você "
    "di il per non sono della gli si anche più questo nel alla delle essere "
)
_OTHER = frozenset(_OTHER_WORDS.split()) - _ENGLISH
_FENCED_BLOCK = re.compile(r"^ {0,3}(```|~~~)[^\n]*\n.*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
_NOT_PROSE = re.compile(r"`[^`\n]*`|https?://\S+|^\s*(?:[│├└┌┐┘┬┴┼─|+-]+\s*)+.*$", re.MULTILINE)


def prose_only(text: str) -> str:
    """``text`` without fenced code blocks, inline code, addresses and drawn trees."""
    if "`" not in text and "://" not in text and "─" not in text:
        return text
    return _NOT_PROSE.sub(" ", _FENCED_BLOCK.sub(" ", text))
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
    other_words = sum(map(_OTHER.__contains__, words))
    score = min(1.0, english_words / len(words) / SATURATION) * (ascii_letters / letters)
    if other_words > english_words:
        score *= english_words / (english_words + other_words)
    return LanguageGuess("en" if score >= 0.5 else "other", round(score, 3), len(words))
