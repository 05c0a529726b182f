"""Helpers shared by the template generators."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable

from skillgym_builder.skillcard import Line, SkillCard
from skillgym_builder.templates.base import data_text


def pick_lines(card: SkillCard, rng: random.Random, count: int, *, min_sections: int = 2) -> list[Line]:
    """``count`` quotable lines covering as many sections as possible, in random order."""
    lines = card.quotable_lines()
    by_section: dict[str, list[Line]] = {}
    for line in lines:
        by_section.setdefault(line.section, []).append(line)
    picked = [rng.choice(group) for group in by_section.values()]
    rng.shuffle(picked)
    picked = picked[:count]
    rest = [line for line in lines if line not in picked]
    rng.shuffle(rest)
    picked += rest[: max(0, min(count, len(lines)) - len(picked))]
    rng.shuffle(picked)
    return picked


def jsonl(rows: Iterable[dict[str, object]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def solution_files(template_id: str, names: Iterable[str], *, with_skillmd: bool = True) -> dict[str, bytes]:
    files = {name: data_text("templates", template_id, "solution", name).encode() for name in names}
    if with_skillmd:
        files["skillmd.py"] = data_text("common", "skillmd.py").encode()
    return files


def pattern_on(patterns: Iterable[str], knob: str) -> bool:
    return knob in set(patterns)
