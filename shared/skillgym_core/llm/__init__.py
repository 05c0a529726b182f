"""A client for any OpenAI-compatible chat endpoint, configured per role."""

from skillgym_core.llm.client import ChatResponse, LLMClient, LLMError, LLMSettings, ToolCallRequest, Usage
from skillgym_core.llm.judge import RubricItem, RubricJudge, combine, parse_rubric
from skillgym_core.llm.roles import ROLES, role_settings

__all__ = [
    "ROLES",
    "ChatResponse",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "RubricItem",
    "RubricJudge",
    "ToolCallRequest",
    "Usage",
    "combine",
    "parse_rubric",
    "role_settings",
]
