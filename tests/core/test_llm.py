from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr
from skillgym_core.llm import LLMClient, LLMError, LLMSettings, role_settings

from tests.support.scripted_llm import ScriptedLLMServer, Sequence, assistant, tool_call


def test_tool_calls_usage_and_cost_are_accounted() -> None:
    responder = Sequence([assistant("", [tool_call("write_file", {"path": "a.txt", "content": "x"})])], final="ok")
    with ScriptedLLMServer(responder) as server:
        client = LLMClient(
            LLMSettings(base_url=server.base_url, model="m", cost_per_1k_prompt=1.0, cost_per_1k_completion=2.0)
        )
        first = client.chat([{"role": "user", "content": "go"}], tools=[{"type": "function", "function": {"name": "write_file"}}])
        assert first.tool_calls[0].name == "write_file"
        assert first.tool_calls[0].arguments == {"path": "a.txt", "content": "x"}
        second = client.chat([{"role": "user", "content": "go"}, first.assistant_message()])
        assert second.content == "ok"
        assert client.usage.calls == 2
        assert client.usage.prompt_tokens == first.usage.prompt_tokens + second.usage.prompt_tokens
        expected_cost = client.usage.prompt_tokens / 1000 + client.usage.completion_tokens / 1000 * 2
        assert client.usage.cost_usd == pytest.approx(expected_cost)
        assert server.requests[0]["tools"][0]["function"]["name"] == "write_file"


def test_retries_through_outages_then_fails_typed() -> None:
    with ScriptedLLMServer(Sequence([], final="fine"), fail_first=2) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, max_retries=3, backoff_s=0.01))
        assert client.chat([{"role": "user", "content": "hi"}]).content == "fine"
        assert len(server.requests) == 3
    with ScriptedLLMServer(Sequence([]), fail_first=5) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, max_retries=2, backoff_s=0.01))
        with pytest.raises(LLMError) as info:
            client.chat([{"role": "user", "content": "hi"}])
        assert info.value.reason == "llm_unavailable"


def test_transcript_never_contains_the_key(tmp_path: Path) -> None:
    secret = "sk-test-very-secret-123"
    log = tmp_path / "llm.jsonl"
    with ScriptedLLMServer(lambda body: assistant(f"echo {secret}")) as server:
        client = LLMClient(
            LLMSettings(base_url=server.base_url, api_key=SecretStr(secret)), transcript=log, role="judge"
        )
        client.chat([{"role": "user", "content": "hello"}])
    text = log.read_text()
    assert secret not in text
    record = json.loads(text.splitlines()[0])
    assert record["role"] == "judge" and record["request"]["messages"][0]["content"] == "hello"


def test_role_settings_come_from_the_environment() -> None:
    env = {
        "SKILLGYM_REVIEWER_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "SKILLGYM_REVIEWER_LLM_MODEL": "rev-model",
        "SKILLGYM_REVIEWER_LLM_TIMEOUT_S": "7",
        "SKILLGYM_JUDGE_LLM_MODEL": "no-url",
    }
    reviewer = role_settings("reviewer", env)
    assert reviewer is not None and reviewer.model == "rev-model" and reviewer.timeout_s == 7
    assert role_settings("judge", env) is None
    assert role_settings("builder", env) is None


def test_rubric_combines_programmatic_and_judged_items() -> None:
    from skillgym_core.errors import ContractError
    from skillgym_core.llm import RubricJudge, combine, parse_rubric

    items = parse_rubric([
        {"name": "file", "weight": 0.5},
        {"name": "values", "weight": 0.2},
        {"name": "clarity", "weight": 0.3, "kind": "llm", "description": "the summary is clear"},
    ])
    with ScriptedLLMServer(lambda body: assistant('{"score": 0.5, "reason": "partly clear"}')) as server:
        judge = RubricJudge(LLMClient(LLMSettings(base_url=server.base_url)))
        judged = judge.judge(items, "write a summary", {"summary.md": "some text"})
        assert "the summary is clear" in server.requests[0]["messages"][1]["content"]
    assert judged == {"clarity": 0.5}
    assert combine(items, {"file": 1.0, "values": 0.0}, judged) == pytest.approx(0.65)
    with pytest.raises(ContractError):
        parse_rubric([{"name": "a", "weight": 0.5}, {"name": "b", "weight": 0.4}])


def test_hostile_response_shapes_parse_or_fail_typed() -> None:
    nested = {"id": "deep", "type": "function", "function": {"name": "bash", "arguments": "[" * 100_000}}
    odd = {"id": "odd", "type": "function", "function": "bash"}
    as_object = {"id": "obj", "type": "function", "function": {"name": "bash", "arguments": {"command": "ls"}}}
    message = {"role": "assistant", "content": None, "tool_calls": [nested, odd, as_object]}
    body = {"choices": [{"message": message}], "usage": {"prompt_tokens": "many", "prompt_tokens_details": [1]}}
    client = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1"))
    response = client._parse(body)
    assert [call.name for call in response.tool_calls] == ["bash", "", "bash"]
    assert response.tool_calls[0].arguments == {"_raw": "[" * 100_000}
    assert response.tool_calls[2].arguments == {"command": "ls"}
    assert response.usage.prompt_tokens == 0 and response.usage.calls == 1
    for broken in ({"message": "text"}, {"message": {"tool_calls": "bash"}}, {"message": {"tool_calls": ["bash"]}}):
        with pytest.raises(LLMError) as info:
            client._parse({"choices": [broken]})
        assert info.value.reason == "llm_malformed"
