"""How a need is worded: denied, optional, only pointed at, or plainly stated.

Rules find candidate lines; this module reads the words around a match to tell "needs X" from
"does not need X", "uses X if available" and "see X for details". It looks at the clause before
the match (negation), the sentence holding it (optionality), the heading above it (reference
and requirement sections) and, for a line inside a fenced block, the sentence that introduces
the block. Only prose is qualified: a match in a script is taken as written."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from enum import Enum

from skillgym_core.contracts.skill import Evidence

from skillgym_ingest.annotate.rules import Hit
from skillgym_ingest.content import SCRIPT_LANGUAGES, SkillContent, suffix_of


class Stance(Enum):
    STATED = "stated"
    OPTIONAL = "optional"
    NEGATED = "negated"
    REFERENCE = "reference"  # under a heading such as "References" or "Further reading"


NEGATION = re.compile(
    r"\b(?:no|not|never|without|none|nothing|neither|nor|cannot|instead of|rather than|unlike|avoid|avoids)\b|n't\b",
    re.IGNORECASE,
)
OPTIONAL = re.compile(
    r"\b(?:optional(?:ly)?|if (?:it is |one is |you have (?:one|it)? ?|an? [\w-]+ (?:is )?)?(?:available|present|"
    r"installed|configured|detected|enabled)|if you (?:have|want|like|prefer|need)|when (?:available|present)|"
    r"(?:falls?|falling) back|fallback|otherwise|nice[- ]to[- ]have|not (?:required|needed|necessary)|"
    r"(?:you )?can also|alternatively|instead of installing|speeds? (?:it )?up|(?:much |a lot )?faster|"
    r"recommended|if possible|if (?:asked|requested)|when (?:asked|requested)|on request|only if|only when|"
    # a remedy for a broken set-up ("if ollama is unreachable: ollama pull ...") is not the procedure
    r"if (?:the )?[`'\"]?[\w$./-]+[`'\"]?(?: \w+)? (?:is|are) (?:missing|unreachable|absent|down|"
    r"not (?:running|installed|found|available|reachable)))\b",
    re.IGNORECASE,
)
# "for the X API, see the `x-api` reference": the sentence sends the reader elsewhere for X
_REDIRECT_AFTER = re.compile(r"\b(?:see|refer to|consult)\b|\buse the `?[\w-]+`? (?:skill|reference|guide)\b",
                             re.IGNORECASE)
_FOR_BEFORE = re.compile(r"\bfor\b", re.IGNORECASE)
# Negation is read in the clause before the match, at most this many words back.
_NEGATION_WORDS = 5
_CLAUSE_END = re.compile(r"[.!?;:,(](?:\s|$)|\s[-\u2013\u2014]\s")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)\s*([\w+.-]*)")
_REFERENCE_TITLE = re.compile(
    r"\b(?:references?|resources|further reading|see also|links|learn more|documentation|docs|credits|"
    r"acknowledge?ments?|licen[cs]e|about|authors?|community|find more|sources|citation)\b",
    re.IGNORECASE,
)
_REQUIREMENT_TITLE = re.compile(
    r"\b(?:requirements?|prerequisites?|hardware|before you (?:start|begin)|you(?:'ll| will) need|"
    r"what you need|system requirements)\b",
    re.IGNORECASE,
)
_PROSE_SUFFIXES = frozenset({".md", ".mdx", ".txt", ".rst", ""})


@dataclass(frozen=True)
class Outline:
    """Headings and fenced blocks of SKILL.md, by absolute line number."""

    path: str | None
    heading_lines: list[int]
    headings: list[str]
    fences: list[tuple[int, int, str]]  # first line, closing line, the prose line just before
    fence_languages: dict[int, str] = field(default_factory=dict)  # first line -> the fence's info word

    def fence_language(self, line: int) -> str | None:
        """The info word (``yaml``, ``bash``, ... or "") of the fenced block holding ``line``; None outside one."""
        for first, last, _ in self.fences:
            if first < line < last:
                return self.fence_languages.get(first, "")
        return None

    def heading_above(self, line: int) -> str:
        index = bisect.bisect_right(self.heading_lines, line) - 1
        return self.headings[index] if index >= 0 else ""

    def lead_in(self, line: int) -> str | None:
        """The sentence introducing the fenced block that holds ``line``, if it is in one."""
        for first, last, lead in self.fences:
            if first < line < last:
                return lead
        return None

    def in_reference_section(self, hit: Hit) -> bool:
        return hit.file == self.path and bool(_REFERENCE_TITLE.search(self.heading_above(hit.line)))

    def in_requirement_section(self, hit: Hit) -> bool:
        return hit.file == self.path and bool(_REQUIREMENT_TITLE.search(self.heading_above(hit.line)))


def outline(content: SkillContent) -> Outline:
    heading_lines: list[int] = []
    headings: list[str] = []
    fences: list[tuple[int, int, str]] = []
    languages: dict[int, str] = {}
    open_fence: tuple[int, str, str] | None = None  # first line, marker, lead-in
    last_prose = ""
    for number, text in enumerate(content.body.split("\n"), start=content.parsed.body_line):
        fence = _FENCE.match(text)
        if open_fence is not None:
            if fence and fence.group(1) == open_fence[1]:
                fences.append((open_fence[0], number, open_fence[2]))
                open_fence = None
            continue
        if fence:
            open_fence = (number, fence.group(1), last_prose)
            languages[number] = fence.group(2).lower()
            continue
        heading = _HEADING.match(text)
        if heading:
            heading_lines.append(number)
            headings.append(heading.group(2))
            last_prose = ""
        elif text.strip():
            last_prose = _last_sentence(text.strip())
    if open_fence is not None:
        fences.append((open_fence[0], 1 << 30, open_fence[2]))
    return Outline(content.skill_md_path, heading_lines, headings, fences, languages)


def distinct(evidence: list[Evidence], limit: int = 20) -> list[Evidence]:
    """``evidence`` without repeats of the same rule on the same line, at most ``limit`` items."""
    seen: set[tuple[str, str | None, int | None]] = set()
    kept = []
    for item in evidence:
        key = (item.rule, item.file, item.line)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept[:limit]


def is_prose(path: str) -> bool:
    suffix = suffix_of(path)
    return suffix in _PROSE_SUFFIXES and suffix not in SCRIPT_LANGUAGES


def stance(hit: Hit, shape: Outline, *, negatable: bool = True) -> Stance:
    """How the need ``hit`` found is worded. ``negatable=False`` for rules whose pattern already
    contains the negation that makes them a requirement ("there is no CPU mode")."""
    if not is_prose(hit.file):
        return Stance.STATED
    if shape.in_reference_section(hit):
        return Stance.REFERENCE
    text, start, end = hit.in_context()
    start = min(start, len(text))
    lead = shape.lead_in(hit.line) if hit.file == shape.path else None  # None outside a code block
    # Inside a code block "not" is code ("if not ok:"), not a denial of the need.
    if negatable and lead is None and NEGATION.search(" ".join(_clause_before(text, start).split()[-_NEGATION_WORDS:])):
        return Stance.NEGATED
    if lead is None and _redirects(text, start, end):
        return Stance.REFERENCE
    if says_optional(sentence_around(text, start, end)) or (lead and says_optional(lead)):
        return Stance.OPTIONAL
    return Stance.STATED


def _redirects(text: str, start: int, end: int) -> bool:
    """The match sits in a "for X, see Y" clause: the reader is sent to another reference for X."""
    begin, stop = sentence_bounds(text, start, end)
    before, after = text[begin:start], text[end:stop]
    clause = _clause_before(before, len(before))
    return bool(_FOR_BEFORE.search(" ".join(clause.split()[-4:]))) and bool(_REDIRECT_AFTER.search(after[:120]))


def says_optional(sentence: str) -> bool:
    """An optionality marker that is not itself denied ("there is no fallback", "not optional")."""
    for found in OPTIONAL.finditer(sentence):
        if not NEGATION.search(" ".join(sentence[: found.start()].split()[-2:])):
            return True
    return False


def _last_sentence(text: str) -> str:
    ends = list(_SENTENCE_END.finditer(text, 0, max(len(text) - 1, 0)))
    return text[ends[-1].end() :] if ends else text


def _clause_before(text: str, start: int) -> str:
    prefix = text[:start]
    ends = list(_CLAUSE_END.finditer(prefix))
    return prefix[ends[-1].end() :] if ends else prefix


def gap(limit: int) -> str:
    """Up to ``limit`` characters of one line that hold no negation word: for patterns such as
    "needs ... API key", so that "needs no API key" does not match at all."""
    return r"(?:(?!\b(?:no|not|never|without|none)\b)[^.\n]){0," + str(limit) + "}?"


def sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence holding ``text[start:end]`` begins and ends."""
    begin = 0
    for found in _SENTENCE_END.finditer(text, 0, max(start, 0)):
        begin = found.end()
    after = _SENTENCE_END.search(text, max(end, start))
    return begin, after.end() if after else len(text)


def sentence_around(text: str, start: int, end: int) -> str:
    begin, stop = sentence_bounds(text, start, end)
    return text[begin:stop]


def in_table_row(hit: Hit) -> bool:
    """A hit in a Markdown table row: a table lists things (features, modes, supported tools); the
    procedure is in sentences."""
    return hit.excerpt.lstrip().startswith("|")
