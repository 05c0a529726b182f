"""Whether two task instructions say the same thing once their data is masked, and what of its
skill a task uses. A family that gives skills with different tools the same exercise (their
instructions equal word for word but for numbers, values and file names) teaches nothing about
either skill; the builder refuses such a task and a run's summary lists any pair it finds.

Instructions are compared as sets of word 3-grams after masking numbers, quoted and backticked
values and file names; ``THRESHOLD`` is the Jaccard similarity from which two are the same."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

THRESHOLD = 0.9
_MASKS = (
    (re.compile(r"`[^`\n]*`"), " <v> "),
    (re.compile(r"\"[^\"\n]*\"|'[^'\n]*'"), " <v> "),
    (re.compile(r"\b[\w.-]*[/\\][\w./\\-]*|\b[\w-]+\.[a-z][a-z0-9]{0,4}\b"), " <p> "),
    (re.compile(r"\d+(?:[.,]\d+)*"), " <n> "),
)
_WORD = re.compile(r"<[vpn]>|[^\W\d_]+")

Shingles = frozenset[tuple[str, ...]]


def masked_words(instruction: str) -> list[str]:
    text = instruction.lower()
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return _WORD.findall(text)


def shingles(words: list[str], size: int = 3) -> Shingles:
    if len(words) < size:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(tuple(words[i:i + size]) for i in range(len(words) - size + 1))


def instruction_shingles(instruction: str) -> Shingles:
    return shingles(masked_words(instruction))


def similarity(a: Shingles, b: Shingles) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def usage_tools(skill_name: str, usage: Mapping[str, Any]) -> frozenset[str]:
    """What of its skill a task uses (``[metadata] skill_usage``): libraries and programs by name,
    the skill's own scripts and stated facts as that skill's (two skills' ``scripts/run.py`` are
    different tools; copies of one skill under other ids are the same)."""
    tools = {f"library:{name}" for name in usage.get("libraries") or () if isinstance(name, str)}
    tools |= {f"program:{name}" for name in usage.get("tools") or () if isinstance(name, str)}
    tools |= {f"script:{skill_name}/{path}" for path in usage.get("scripts") or () if isinstance(path, str)}
    if usage.get("kind") == "skill_facts":
        tools.add(f"facts:{skill_name}")
    return frozenset(tools)
