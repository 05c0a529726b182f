"""The run summary table shows who built the tasks, why skills were skipped and any fallback."""

from __future__ import annotations

from rich.console import Console

from skillgym.console import summary_table


def _render(summary: dict[str, object]) -> str:
    console = Console(width=120, record=True)
    console.print(summary_table(summary))
    return console.export_text()


def test_builders_skips_and_fallbacks_are_shown() -> None:
    text = _render({"tasks_built": 3, "tasks_by_builder": {"family": 2, "llm": 1},
                    "skills_skipped_by_reason": {"family_no_skill_use": 2},
                    "llm_fallbacks": [{"skill": "s", "reason": "timeout"}]})
    assert "tasks built by family" in text and "tasks built by llm" in text
    assert "skills skipped: family_no_skill_use" in text
    assert "LLM builder fallbacks" in text


def test_a_clean_run_mentions_no_fallback() -> None:
    assert "fallback" not in _render({"tasks_built": 1, "tasks_by_builder": {"family": 1}})
