"""OpenAI-compatible chat completions with tool calling, retries, timeouts and token accounting.

Tool calls are read from ``message.tool_calls``, or from the text when the server has no tool
parser (``tool_call_format``, see :mod:`skillgym_core.llm.text_tools`). Request/response logging
never includes the API key."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, SecretStr

from skillgym_core.llm.errors import LLMError
from skillgym_core.llm.text_tools import ToolCallFormat, extract_tool_calls, offered_tool_names
from skillgym_core.llm.tokens import TokenTrace, token_trace

log = logging.getLogger(__name__)

__all__ = ["ChatResponse", "LLMClient", "LLMError", "LLMSettings", "ToolCallRequest", "Usage"]


class LLMSettings(BaseModel):
    """Settings of one role (builder, reviewer, judge, baseline, teacher)."""

    base_url: str
    model: str = "default"
    api_key: SecretStr = SecretStr("")
    timeout_s: float = 120.0
    max_retries: int = 3
    backoff_s: float = 0.5
    temperature: float = 0.0
    max_tokens: int | None = None
    cost_per_1k_prompt: float = 0.0
    cost_per_1k_completion: float = 0.0
    # where tool calls are read: native ``tool_calls``, or the text in one format ("auto": native
    # when present, else whichever text format the content holds)
    tool_call_format: ToolCallFormat = "auto"
    # ask for each turn's token ids and log-probabilities (``logprobs``, ``return_token_ids``);
    # off by default: hosted APIs refuse or bill for what they do not support
    capture_tokens: bool = False


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "calls": self.calls,
        }

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        self.cost_usd += other.cost_usd
        self.calls += other.calls


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str


@dataclass
class ChatResponse:
    content: str
    tool_calls: list[ToolCallRequest]
    usage: Usage
    reasoning: str | None = None
    finish_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    # "native", or the text format the calls were read from; None without calls
    tool_call_format: str | None = None
    tokens: TokenTrace | None = None

    def assistant_message(self) -> dict[str, Any]:
        """The message to append to the conversation, in OpenAI's shape."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments}}
                for c in self.tool_calls
            ]
        return message


def _parse_arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_value": value}


def _raw_arguments(function: dict[str, Any]) -> str:
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    return str(arguments or "{}")


def _tool_call(index: int, call: Any) -> ToolCallRequest:
    """A requested tool call; a ``function`` that is not an object reads as an unnamed tool."""
    if not isinstance(call, dict):
        raise LLMError("response tool_calls holds something other than objects", reason="llm_malformed")
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    raw = _raw_arguments(function)
    return ToolCallRequest(
        id=str(call.get("id") or f"call_{index}"),
        name=str(function.get("name") or ""),
        raw_arguments=raw,
        arguments=_parse_arguments(raw),
    )


def _token_count(value: Any) -> int:
    try:
        return max(int(value or 0), 0)
    except (TypeError, ValueError, OverflowError):
        return 0


class LLMClient:
    def __init__(
        self,
        settings: LLMSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        transcript: Path | None = None,
        role: str = "default",
    ) -> None:
        self.settings = settings
        self.role = role
        self.transcript = transcript
        headers = {"Content-Type": "application/json"}
        key = settings.api_key.get_secret_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(
            base_url=settings.base_url.rstrip("/"), headers=headers, timeout=settings.timeout_s, transport=transport
        )
        self.usage = Usage()

    @classmethod
    def for_role(cls, role: str, *, transcript: Path | None = None) -> LLMClient | None:
        """A client configured from ``SKILLGYM_<ROLE>_LLM_*``, or None when the role has no endpoint."""
        from skillgym_core.llm.roles import role_settings

        settings = role_settings(role)
        return None if settings is None else cls(settings, transcript=transcript, role=role)

    def close(self) -> None:
        self._http.close()

    def _record(self, body: dict[str, Any], data: dict[str, Any] | None, error: str | None, seconds: float,
                tool_call_format: str | None = None) -> None:
        """Append the exchange to the transcript (JSON lines). Headers, and so the key, are never
        written; any occurrence of the key in the payload is masked."""
        if self.transcript is None:
            return
        line = json.dumps(
            {"role": self.role, "model": self.settings.model, "request": body, "response": data, "error": error,
             "tool_call_format": tool_call_format, "seconds": round(seconds, 4)},
            default=str,
        )
        key = self.settings.api_key.get_secret_value()
        if key:
            line = line.replace(key, "***")
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        with self.transcript.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> ChatResponse:
        """One completion. ``tool_choice`` is passed as given ("auto", "none", or a named
        function to force); servers differ on "required" (llama.cpp's answers it with a 500)."""
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature if temperature is None else temperature,
        }
        if tools:
            body["tools"] = tools
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if self.settings.max_tokens:
            body["max_tokens"] = self.settings.max_tokens
        if response_format:
            body["response_format"] = response_format
        if self.settings.capture_tokens:
            body.update(logprobs=True, return_token_ids=True)
        started = time.perf_counter()
        try:
            data = self._post_with_retries(body)
        except LLMError as exc:
            self._record(body, None, str(exc), time.perf_counter() - started)
            raise
        try:
            response = self._parse(data, offered_tool_names(tools))
        except LLMError as exc:
            self._record(body, data, str(exc), time.perf_counter() - started)
            raise
        self._record(body, data, None, time.perf_counter() - started, response.tool_call_format)
        return response

    def _post_with_retries(self, body: dict[str, Any]) -> dict[str, Any]:
        last_error: str = ""
        for attempt in range(1, self.settings.max_retries + 1):
            started = time.perf_counter()
            try:
                response = self._http.post("/chat/completions", json=body)
            except httpx.HTTPError as exc:
                last_error = f"{type(exc).__name__}: {exc}"
            else:
                log.debug(
                    "llm call",
                    extra={"model": body["model"], "status": response.status_code, "s": time.perf_counter() - started},
                )
                if response.status_code == 200:
                    try:
                        result: dict[str, Any] = response.json()
                        return result
                    except json.JSONDecodeError:
                        last_error = "response is not JSON"
                elif response.status_code in (408, 409, 425, 429) or response.status_code >= 500:
                    last_error = f"HTTP {response.status_code}: {response.text[:200]}"
                else:
                    raise LLMError(
                        f"endpoint refused the request: HTTP {response.status_code}",
                        reason="llm_refused",
                        status=response.status_code,
                        body=response.text[:500],
                    )
            if attempt < self.settings.max_retries:
                time.sleep(self.settings.backoff_s * 2 ** (attempt - 1))
        raise LLMError(f"endpoint failed after {self.settings.max_retries} attempts: {last_error}",
                       reason="llm_unavailable", base_url=self.settings.base_url)

    def _parse(self, data: dict[str, Any], offered: frozenset[str] = frozenset()) -> ChatResponse:
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError("response has no choices[0].message", reason="llm_malformed") from exc
        if not isinstance(message, dict):
            raise LLMError("response choices[0].message is not an object", reason="llm_malformed")
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise LLMError("response tool_calls is not a list", reason="llm_malformed")
        calls = [_tool_call(index, call) for index, call in enumerate(raw_calls)]
        raw_usage = data.get("usage")
        raw_usage = raw_usage if isinstance(raw_usage, dict) else {}
        details = raw_usage.get("prompt_tokens_details")
        prompt = _token_count(raw_usage.get("prompt_tokens"))
        completion = _token_count(raw_usage.get("completion_tokens"))
        cached = _token_count(details.get("cached_tokens") if isinstance(details, dict) else 0)
        usage = Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            cached_tokens=cached,
            cost_usd=prompt / 1000 * self.settings.cost_per_1k_prompt
            + completion / 1000 * self.settings.cost_per_1k_completion,
            calls=1,
        )
        self.usage.add(usage)
        content = message.get("content") or ""
        call_format = "native" if calls else None
        if not calls and isinstance(content, str):
            found = extract_tool_calls(content, offered, self.settings.tool_call_format)
            if found is not None:
                calls = [ToolCallRequest(id=f"call_{index}", name=call.name, arguments=call.arguments,
                                         raw_arguments=call.raw_arguments)
                         for index, call in enumerate(found.calls)]
                content, call_format = found.content, found.format
        return ChatResponse(
            content=content,
            tool_calls=calls,
            usage=usage,
            reasoning=message.get("reasoning_content"),
            finish_reason=choice.get("finish_reason"),
            raw=data,
            tokens=token_trace(data) if self.settings.capture_tokens else None,
            tool_call_format=call_format,
        )
