"""A small pattern-rule engine: each rule is a regex guarded by cheap literal triggers.

A rule's regex only runs on a file whose lower-cased text contains one of its triggers, so
a skill is scanned at roughly the cost of a few substring searches per rule. A rule may also
name its anchors, literals that every match starts with: on ASCII text the regex is then only
tried where an anchor occurs (``str.find``), which yields exactly what ``finditer`` would."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import ahocorasick
from skillgym_core.contracts.skill import Evidence

from skillgym_ingest.content import SCRIPT_LANGUAGES, SkillContent

MD_SUFFIXES = frozenset({".md", ".mdx", ".txt", ".rst", ""})


@dataclass(frozen=True)
class Rule:
    rule: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]
    scope: str = "all"  # all | code | instructions | scripts | docs | skill_md
    human_docs: bool = True  # whether READMEs and changelogs (install notes for people) count
    anchors: tuple[str, ...] = ()  # every (non-empty) match starts with one; lower-case if the rule ignores case
    # False only when the pattern cannot match the text (a cheap exact pre-check for trigger-less rules).
    guard: Callable[[str], bool] | None = field(default=None, compare=False)

    def finditer(self, text: str, lowered: str) -> Iterator[re.Match[str]]:
        """``pattern.finditer(text)``, tried only at anchor positions when that is equivalent."""
        if self.guard is not None and not self.guard(text):
            return iter(())
        return anchored_finditer(self.pattern, text, lowered, self.anchors)

    def applies_to(self, path: str, suffix: str, is_skill_md: bool) -> bool:
        if not self.human_docs and _is_human_doc(path):
            return False
        if self.scope == "all":
            return True
        if self.scope == "skill_md":
            return is_skill_md
        if self.scope == "instructions":
            return is_skill_md or suffix in SCRIPT_LANGUAGES
        if self.scope == "scripts":
            return suffix in SCRIPT_LANGUAGES
        if self.scope == "code":
            return suffix in SCRIPT_LANGUAGES or is_skill_md or suffix in {".json", ".toml", ".yaml", ".yml"}
        return suffix in MD_SUFFIXES or is_skill_md


def rule(
    name: str, pattern: str, triggers: Iterable[str], scope: str = "all", flags: int = re.IGNORECASE,
    *, human_docs: bool = True, anchors: Iterable[str] = (), guard: Callable[[str], bool] | None = None,
) -> Rule:
    folded = tuple(a.lower() for a in anchors) if flags & re.IGNORECASE else tuple(anchors)
    return Rule(name, re.compile(pattern, flags), tuple(t.lower() for t in triggers), scope, human_docs, folded, guard)


def anchored_finditer(
    pattern: re.Pattern[str], text: str, lowered: str, anchors: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """What ``pattern.finditer(text)`` yields, given literals every match starts with.

    On ASCII text the pattern is only tried where an anchor occurs (in ``lowered`` when the
    pattern ignores case, where anchors must be lower-case); other text, or no anchors, falls
    back to ``finditer``. Matches must be non-empty."""
    if not anchors or not text.isascii():
        return pattern.finditer(text)
    return _at_anchors(pattern, text, lowered if pattern.flags & re.IGNORECASE else text, anchors)


def _at_anchors(pattern: re.Pattern[str], text: str, haystack: str, anchors: tuple[str, ...]) -> Iterator[re.Match[str]]:
    positions: set[int] = set()
    for anchor in anchors:
        start = haystack.find(anchor)
        while start != -1:
            positions.add(start)
            start = haystack.find(anchor, start + 1)
    resume = 0
    for position in sorted(positions):
        if position < resume:
            continue
        match = pattern.match(text, position)
        if match is not None:
            yield match
            resume = max(match.end(), position + 1)


def has_run(ascii_chars: str, length: int) -> Callable[[str], bool]:
    """A guard: does the text hold ``length`` consecutive characters from ``ascii_chars``?

    Exact for patterns such as ``[A-Z]{300,}``: non-ASCII characters are never in the class,
    and in UTF-8 they only produce bytes >= 0x80, which map outside it too."""
    table = bytes(ord("a") if chr(code) in ascii_chars else ord(" ") for code in range(256))
    needle = b"a" * length

    def check(text: str) -> bool:
        return len(text) >= length and needle in text.encode("utf-8", "surrogatepass").translate(table)

    return check


_HUMAN_DOCS = ("readme", "changelog", "contributing", "license", "install", "security", "code_of_conduct")


# packaging metadata a registry's archive carries beside the skill (a wheel's METADATA, an sdist's PKG-INFO)
_PACKAGING = re.compile(r"(?:^|/)(?:PKG-INFO$|[^/]+\.(?:dist|egg)-info/)")


def _is_human_doc(path: str) -> bool:
    return path.rsplit("/", 1)[-1].lower().startswith(_HUMAN_DOCS) or bool(_PACKAGING.search(path))


@dataclass(frozen=True)
class Hit:
    rule: str
    file: str
    line: int
    excerpt: str
    column: int = 0  # where the match starts in ``excerpt`` (may lie past its 200-character cut)
    end: int = 0  # where it ends, likewise
    # Markdown is often wrapped at a fixed width: the paragraph holding the line, joined, so that a
    # sentence's "if", "not" or "see" on the line before still qualifies the match.
    paragraph: str = ""
    paragraph_column: int = 0

    def in_context(self) -> tuple[str, int, int]:
        """The text to read the match's sentence in, and where the match starts and ends there."""
        if self.paragraph:
            return self.paragraph, self.paragraph_column, self.paragraph_column + self.end - self.column
        return self.excerpt, self.column, self.end

    def evidence(self) -> Evidence:
        return Evidence(rule=self.rule, file=self.file, line=self.line, excerpt=self.excerpt)


class RuleSet:
    """Rules scanned together: each document's triggers are looked up once for all rules."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules = list(rules)
        self.triggers = sorted({t for item in self.rules for t in item.triggers})
        self._automaton = ahocorasick.Automaton()
        for trigger in self.triggers:
            self._automaton.add_word(trigger, trigger)
        if self.triggers:
            self._automaton.make_automaton()
        self._always = [i for i, item in enumerate(self.rules) if not item.triggers]
        self._by_trigger: dict[str, list[int]] = {}
        for index, item in enumerate(self.rules):
            for trigger in item.triggers:
                self._by_trigger.setdefault(trigger, []).append(index)

    def present(self, lowered: str) -> set[str]:
        """Every trigger occurring in ``lowered``, found in one Aho-Corasick pass."""
        if not self.triggers:
            return set()
        return {found for _, found in self._automaton.iter(lowered)}

    def __add__(self, other: RuleSet) -> RuleSet:
        return RuleSet(self.rules + other.rules)

    def scan(self, content: SkillContent, max_hits_per_rule: int = 5) -> list[Hit]:
        hits: list[Hit] = []
        for path, text, line_offset, suffix, is_md in _documents(content):
            paragraphs: _Paragraphs | None = None  # made at the first hit: most documents have none
            lowered = text.lower()
            candidates = set(self._always)
            for trigger in self.present(lowered):
                candidates.update(self._by_trigger[trigger])
            for index in sorted(candidates):
                item = self.rules[index]
                if not item.applies_to(path, suffix, is_md):
                    continue
                for count, match in enumerate(item.finditer(text, lowered), start=1):
                    line = text.count("\n", 0, match.start()) + line_offset
                    start = text.rfind("\n", 0, match.start()) + 1
                    end = text.find("\n", match.end())
                    raw = text[start : end if end != -1 else len(text)]
                    column = match.start() - start - (len(raw) - len(raw.lstrip()))
                    if is_md and paragraphs is None:
                        paragraphs = _Paragraphs(text)
                    paragraph, offset = paragraphs.around(line - line_offset) if paragraphs else ("", 0)
                    hits.append(Hit(item.rule, path, line, raw.strip()[:200], column, column + len(match.group(0)),
                                    paragraph, offset + column))
                    if count >= max_hits_per_rule:
                        break
        return hits


_BLOCK_BREAK = re.compile(r"^\s*$|^ {0,3}(?:#{1,6}\s|```|~~~|\||<!--|>)")
_BLOCK_START = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")
_FENCE_MARK = re.compile(r"^ {0,3}(?:```|~~~)")
_PARAGRAPH_REACH = 12  # lines either way


class _Paragraphs:
    """The wrapped paragraph (or list item) around a line of Markdown, outside fenced blocks."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.in_fence: list[bool] = []
        inside = False
        for line in self.lines:
            marker = bool(_FENCE_MARK.match(line))
            self.in_fence.append(inside or marker)
            inside = inside != marker

    def _joins(self, index: int) -> bool:
        return 0 <= index < len(self.lines) and not self.in_fence[index] and not _BLOCK_BREAK.match(self.lines[index])

    def around(self, index: int) -> tuple[str, int]:
        """The paragraph joined with single spaces, and where line ``index`` starts in it ("" when
        the line stands alone: in a fence, a table, a heading)."""
        if not self._joins(index):
            return "", 0
        first = index
        while (index - first < _PARAGRAPH_REACH and not _BLOCK_START.match(self.lines[first])
               and self._joins(first - 1)):
            first -= 1
        last = index
        while (last - index < _PARAGRAPH_REACH and self._joins(last + 1)
               and not _BLOCK_START.match(self.lines[last + 1])):
            last += 1
        if first == last:
            return "", 0
        before = [line.strip() for line in self.lines[first:index]]
        joined = " ".join(line.strip() for line in self.lines[first : last + 1])
        return joined, sum(len(part) + 1 for part in before)


def scan(content: SkillContent, rules: Iterable[Rule] | RuleSet) -> list[Hit]:
    ruleset = rules if isinstance(rules, RuleSet) else RuleSet(rules)
    return ruleset.scan(content)


def _documents(content: SkillContent) -> Iterable[tuple[str, str, int, str, bool]]:
    if content.skill_md_path is not None:
        md = content.skill_md_path
        desc = content.description
        if desc:
            yield md, desc, 2, ".md", True
        yield md, content.body, content.parsed.body_line, ".md", True
    for text_file in content.text_files:
        yield text_file.path, text_file.text, 1, text_file.suffix, False
