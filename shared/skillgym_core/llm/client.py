"""OpenAI-compatible chat completions with tool calling, retries, timeouts and token accounting.

Request/response logging never includes the API key."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, SecretStr

from skillgym_core.errors import SkillGymError

log = logging.getLogger(__name__)


class LLMError(SkillGymError):
    reason = "llm"


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
    except json.JSONDecodeError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_value": value}


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

    def _record(self, body: dict[str, Any], data: dict[str, Any] | None, error: str | None, seconds: float) -> None:
        """Append the exchange to the transcript (JSON lines). Headers, and so the key, are never
        written; any occurrence of the key in the payload is masked."""
        if self.transcript is None:
            return
        line = json.dumps(
            {"role": self.role, "model": self.settings.model, "request": body, "response": data, "error": error,
             "seconds": round(seconds, 4)},
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
    ) -> ChatResponse:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature if temperature is None else temperature,
        }
        if tools:
            body["tools"] = tools
        if self.settings.max_tokens:
            body["max_tokens"] = self.settings.max_tokens
        if response_format:
            body["response_format"] = response_format
        started = time.perf_counter()
        try:
            data = self._post_with_retries(body)
        except LLMError as exc:
            self._record(body, None, str(exc), time.perf_counter() - started)
            raise
        self._record(body, data, None, time.perf_counter() - started)
        return self._parse(data)

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

    def _parse(self, data: dict[str, Any]) -> ChatResponse:
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError("response has no choices[0].message", reason="llm_malformed") from exc
        calls = [
            ToolCallRequest(
                id=str(call.get("id") or f"call_{index}"),
                name=str(call.get("function", {}).get("name", "")),
                raw_arguments=str(call.get("function", {}).get("arguments") or "{}"),
                arguments=_parse_arguments(str(call.get("function", {}).get("arguments") or "{}")),
            )
            for index, call in enumerate(message.get("tool_calls") or [])
        ]
        raw_usage = data.get("usage") or {}
        prompt = int(raw_usage.get("prompt_tokens") or 0)
        completion = int(raw_usage.get("completion_tokens") or 0)
        cached = int((raw_usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        usage = Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            cached_tokens=cached,
            cost_usd=prompt / 1000 * self.settings.cost_per_1k_prompt
            + completion / 1000 * self.settings.cost_per_1k_completion,
            calls=1,
        )
        self.usage.add(usage)
        return ChatResponse(
            content=message.get("content") or "",
            tool_calls=calls,
            usage=usage,
            reasoning=message.get("reasoning_content"),
            finish_reason=choice.get("finish_reason"),
            raw=data,
        )
