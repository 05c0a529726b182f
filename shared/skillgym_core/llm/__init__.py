"""A client for any OpenAI-compatible chat endpoint, configured per role."""

from skillgym_core.llm.client import ChatResponse, LLMClient, LLMError, LLMSettings, ToolCallRequest, Usage

__all__ = ["ChatResponse", "LLMClient", "LLMError", "LLMSettings", "ToolCallRequest", "Usage"]
