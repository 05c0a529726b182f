"""Shared pieces of the end-to-end tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillgym.summary import SUMMARY_FIELDS
from tests.support.scripted_llm import Rules, ScriptedLLMServer, Sequence, assistant, bash

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_SKILLS = REPO / "examples" / "skills"

STAGE_COUNTS = SUMMARY_FIELDS


def explorer_agent() -> Rules:
    """A teacher that looks around the workspace, reads the skill when it has one, then stops."""
    with_skill = Sequence([bash("ls -la /app"), bash("cat /skills/*/SKILL.md | head -20")], final="I looked around.")
    without_skill = Sequence([bash("ls -la /app")], final="I looked around.")
    return Rules([(r"/skills", with_skill)], default=without_skill)


@pytest.fixture
def scripted_teacher() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(explorer_agent()) as server:
        yield server


@pytest.fixture(scope="module")
def module_teacher() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(explorer_agent()) as server:
        yield server


__all__ = ["EXAMPLE_SKILLS", "STAGE_COUNTS", "assistant"]
