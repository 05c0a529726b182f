"""The error every LLM call raises, typed by ``reason`` (``llm_unavailable``, ``llm_refused``,
``llm_malformed``)."""

from __future__ import annotations

from skillgym_core.errors import SkillGymError


class LLMError(SkillGymError):
    reason = "llm"
