"""Quality: does the description match the body, and are the requirements stated clearly."""

from __future__ import annotations

import itertools
import re

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.content import SkillContent

_TERM = re.compile(r"[a-z][a-z0-9+#]{2,}")
_STOP_WORDS = (
    "the and for with that this you are use when from into your will can not should each which have has "
    "was were been how what where then than these those they their them our its there must does only any "
    "also more most such other about after before using used make sure skill skills user users asks ask "
    "asked want wants helps help allows provides including include includes based like via etc all new "
    "any one two get set tasks task work working need needs needed whenever triggers trigger request "
    "requests requested files file guide guidance support supports specific various way ways well just "
)
_STOP = frozenset(_STOP_WORDS.split())
_STEPS = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+\S", re.M)
_HEADINGS = re.compile(r"^#{1,4}\s+(.+)$", re.M)
_WHEN = re.compile(r"\b(?:use (?:this|it)? ?(?:skill )?when|when (?:the )?user|use for|trigger(?:s|ed)? (?:on|when))\b",
                   re.IGNORECASE)
_OUTPUT = re.compile(r"\b(?:output|outputs|returns?|produces?|writes?|generates?|creates?|saves?)\b", re.IGNORECASE)
_INPUT = re.compile(r"\b(?:input|inputs|given|provide|accepts?|reads?|takes?)\b", re.IGNORECASE)
_CODE_FENCE = re.compile(r"^\s*```", re.M)
_WORKFLOW_HEADINGS = ("step", "usage", "workflow", "instruction", "how to", "procedure", "quick start", "process")


# Literals each match of the patterns above starts with (lower-case; they ignore case).
_WHEN_ANCHORS = ("use ", "when ", "trigger")
_OUTPUT_ANCHORS = ("output", "return", "produce", "write", "generate", "create", "save")
_INPUT_ANCHORS = ("input", "given", "provide", "accept", "read", "take")
_STEM_CACHE: dict[str, str] = {}  # term -> stem, "" for words too short to be terms
_STEM_CACHE_LIMIT = 65536


def _stem(term: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return term


def terms(text: str) -> set[str]:
    return _terms_of(set(_TERM.findall(text.lower())))


def _terms_of(words: set[str]) -> set[str]:
    candidates = words - _STOP
    cached = set(map(_STEM_CACHE.get, candidates))
    if None in cached:
        if len(_STEM_CACHE) > _STEM_CACHE_LIMIT:
            _STEM_CACHE.clear()
        for word in candidates:
            if word not in _STEM_CACHE:
                _STEM_CACHE[word] = _stem(word) if len(word) >= 3 else ""
        cached = set(map(_STEM_CACHE.get, candidates))
    cached.discard("")
    return cached  # type: ignore[return-value]


def _has_code_fence(body: str) -> bool:
    # A fence line exists iff one exists at or after the line of the first "```".
    first = body.find("```")
    return first >= 0 and _CODE_FENCE.search(body, body.rfind("\n", 0, first) + 1) is not None


def _found(pattern: re.Pattern[str], text: str, anchors: tuple[str, ...], lowered: str | None = None) -> bool:
    """``pattern.search(text) is not None`` for a pattern whose matches start with an anchor.

    The anchors are common prose ("when ", "ready" holds "read"), so the pattern is tried
    only where one occurs, anchor by anchor, stopping at the first match."""
    if not text.isascii():
        return pattern.search(text) is not None
    folded = text.lower() if lowered is None else lowered
    haystack = folded if pattern.flags & re.IGNORECASE else text
    for anchor in anchors:
        position = haystack.find(anchor)
        while position != -1:
            if pattern.match(text, position) is not None:
                return True
            position = haystack.find(anchor, position + 1)
    return False


def annotate_quality(content: SkillContent) -> dict[str, Annotation]:
    md = content.skill_md_path or "SKILL.md"
    description = content.description
    name = content.parsed.front_matter.get("name")
    desc_terms = terms(description)
    body_terms = _terms_of(set(content.body_words)) | terms(str(name or "").replace("-", " "))
    for text_file in content.text_files[:20]:
        body_terms |= terms(text_file.text[:4000])
    shared = sorted(desc_terms & body_terms)
    score = len(shared) / len(desc_terms) if desc_terms else 0.0
    consistency = Annotation(
        value={"score": round(score, 3), "shared_terms": shared[:30],
               "unmatched_terms": sorted(desc_terms - body_terms)[:30]},
        evidence=[Evidence(rule="quality.consistency.term_overlap", file=md, line=2, excerpt=description[:200])],
    )
    body = content.body
    headings = [h.lower() for h in _HEADINGS.findall(body)] if "#" in body else []
    lowered = body.lower()
    signals = {
        "when_to_use": _found(_WHEN, description, _WHEN_ANCHORS) or _found(_WHEN, body[:3000], _WHEN_ANCHORS),
        "steps": len(list(itertools.islice(_STEPS.finditer(body), 2))) >= 2,
        "workflow_heading": any(any(k in h for k in _WORKFLOW_HEADINGS) for h in headings),
        "inputs_stated": _found(_INPUT, body, _INPUT_ANCHORS, lowered),
        "outputs_stated": _found(_OUTPUT, body, _OUTPUT_ANCHORS, lowered),
        "examples": _has_code_fence(body) or any("example" in h for h in headings),
        "substantial_body": len(body.split(None, 79)) >= 80,
    }
    clarity = sum(signals.values()) / len(signals)
    return {
        "description_consistency": consistency,
        "requirement_clarity": Annotation(
            value={"score": round(clarity, 3), "signals": signals},
            evidence=[Evidence(rule=f"quality.clarity.{k}", file=md) for k, ok in signals.items() if ok],
        ),
    }
