"""Did a run explicitly use the target skill? Counted when a tool call reads the skill's SKILL.md
(any harness's skill location) or invokes the skill through a harness's own skill tool."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from skillgym_core.contracts.atif import Trajectory

SKILL_TOOLS = frozenset({"skill", "Skill", "load_skill", "use_skill"})


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def skill_md_pattern(skill_name: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|[/\s'\"=~]){re.escape(skill_name)}/SKILL\.md\b")


def explicit_skill_use(trajectory: Trajectory, skill_name: str) -> bool:
    if not skill_name:
        return False
    pattern = skill_md_pattern(skill_name)
    for step in trajectory.steps:
        for call in step.tool_calls or []:
            texts = list(_strings(call.arguments))
            if call.function_name in SKILL_TOOLS and any(t.strip() == skill_name for t in texts):
                return True
            if any(pattern.search(text) for text in texts):
                return True
    return False


def explicit_skill_use_json(trajectory: dict[str, Any], skill_name: str) -> bool:
    """The same test on a raw ATIF dict (used by the report, which streams JSON)."""
    if not skill_name:
        return False
    pattern = skill_md_pattern(skill_name)
    for step in trajectory.get("steps") or []:
        for call in step.get("tool_calls") or []:
            texts = list(_strings(call.get("arguments") or {}))
            if call.get("function_name") in SKILL_TOOLS and any(t.strip() == skill_name for t in texts):
                return True
            if any(pattern.search(text) for text in texts):
                return True
    return False
