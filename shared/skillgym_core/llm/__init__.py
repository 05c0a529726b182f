"""A client for any OpenAI-compatible chat endpoint, configured per role."""

from skillgym_core.llm.client import ChatResponse, LLMClient, LLMError, LLMSettings, ToolCallRequest, Usage
from skillgym_core.llm.judge import RubricItem, RubricJudge, combine, parse_rubric
from skillgym_core.llm.roles import ROLES, role_settings
from skillgym_core.llm.text_tools import TOOL_CALL_FORMATS, ToolCallFormat, extract_tool_calls

__all__ = [
    "ROLES",
    "TOOL_CALL_FORMATS",
    "ChatResponse",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "RubricItem",
    "RubricJudge",
    "ToolCallFormat",
    "ToolCallRequest",
    "Usage",
    "combine",
    "extract_tool_calls",
    "parse_rubric",
    "role_settings",
]
