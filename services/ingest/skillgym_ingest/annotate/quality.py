"""Quality: does the description match the body, and are the requirements stated clearly."""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=65536)
def _stem(term: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return term


def terms(text: str) -> set[str]:
    return _terms_of(set(_TERM.findall(text.lower())))


def _terms_of(words: set[str]) -> set[str]:
    return {_stem(t) for t in words - _STOP if len(t) >= 3}


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
    headings = [h.lower() for h in _HEADINGS.findall(body)]
    signals = {
        "when_to_use": bool(_WHEN.search(description) or _WHEN.search(body[:3000])),
        "steps": len(_STEPS.findall(body)) >= 2,
        "workflow_heading": any(any(k in h for k in _WORKFLOW_HEADINGS) for h in headings),
        "inputs_stated": bool(_INPUT.search(body)),
        "outputs_stated": bool(_OUTPUT.search(body)),
        "examples": bool(_CODE_FENCE.search(body)) or any("example" in h for h in headings),
        "substantial_body": len(body.split()) >= 80,
    }
    clarity = sum(signals.values()) / len(signals)
    return {
        "description_consistency": consistency,
        "requirement_clarity": Annotation(
            value={"score": round(clarity, 3), "signals": signals},
            evidence=[Evidence(rule=f"quality.clarity.{k}", file=md) for k, ok in signals.items() if ok],
        ),
    }
