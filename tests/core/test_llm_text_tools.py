"""Tool calls written as text by servers without a tool parser: each format, the offered-name
filter, arguments as strings, markup removed from the content, and the client over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.llm import LLMClient, LLMError, LLMSettings, extract_tool_calls, role_settings

from tests.support.scripted_llm import ScriptedLLMServer, Sequence, assistant, tool_call

OFFERED = frozenset({"bash", "write_file"})
BASH_TOOL = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}


def _calls(text: str, fmt: Any = "auto") -> list[tuple[str, dict[str, Any]]]:
    found = extract_tool_calls(text, OFFERED, fmt)
    return [] if found is None else [(call.name, call.arguments) for call in found.calls]


def test_hermes_blocks_become_calls_and_leave_the_prose() -> None:
    text = ('Let me look first.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>\n'
            '<tool_call>{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}</tool_call>')
    found = extract_tool_calls(text, OFFERED)
    assert found is not None and found.format == "hermes"
    assert [(c.name, c.arguments) for c in found.calls] == [
        ("bash", {"command": "ls"}), ("write_file", {"path": "a.txt", "content": "x"})]
    assert found.content == "Let me look first."
    assert json.loads(found.calls[0].raw_arguments) == {"command": "ls"}


def test_llama3_json_after_the_python_tag_and_untagged() -> None:
    tagged = ('<|python_tag|>{"name": "bash", "parameters": {"command": "ls"}}; '
              '{"name": "bash", "parameters": {"command": "pwd"}}<|eom_id|>')
    found = extract_tool_calls(tagged, OFFERED)
    assert found is not None and found.format == "llama3" and found.content == ""
    assert [c.arguments["command"] for c in found.calls] == ["ls", "pwd"]
    untagged = extract_tool_calls('{"name": "bash", "parameters": {"command": "ls"}}', OFFERED)
    assert untagged is not None and untagged.format == "llama3"
    assert _calls('{"name": "bash", "parameters": {"command": "ls"}}', "llama3") == [("bash", {"command": "ls"})]


def test_mistral_tool_calls_list_and_named_form() -> None:
    text = ('[TOOL_CALLS] [{"name": "bash", "arguments": {"command": "ls"}}, '
            '{"name": "write_file", "arguments": {"path": "b"}}]')
    found = extract_tool_calls(text, OFFERED)
    assert found is not None and found.format == "mistral" and found.content == ""
    assert [c.name for c in found.calls] == ["bash", "write_file"]
    assert _calls('[TOOL_CALLS]bash[ARGS]{"command": "ls"}', "mistral") == [("bash", {"command": "ls"})]


def test_bare_and_fenced_json_objects() -> None:
    bare = extract_tool_calls('{"name": "bash", "arguments": {"command": "ls"}}', OFFERED)
    assert bare is not None and bare.format == "json" and bare.content == ""
    fenced = extract_tool_calls(
        'I will list the files:\n```json\n{"name": "bash", "arguments": {"command": "ls -la"}}\n```\nThen I report.',
        OFFERED)
    assert fenced is not None and fenced.format == "json"
    assert [(c.name, c.arguments) for c in fenced.calls] == [("bash", {"command": "ls -la"})]
    assert fenced.content == "I will list the files:\n\nThen I report."


def test_arguments_given_as_a_json_string() -> None:
    text = '<tool_call>{"name": "bash", "arguments": "{\\"command\\": \\"echo hi\\"}"}</tool_call>'
    found = extract_tool_calls(text, OFFERED, "hermes")
    assert found is not None
    assert found.calls[0].arguments == {"command": "echo hi"}
    assert found.calls[0].raw_arguments == '{"command": "echo hi"}'
    assert _calls('{"name": "bash", "arguments": "{\\"command\\": \\"pwd\\"}"}') == [("bash", {"command": "pwd"})]


def test_unknown_tool_names_are_text() -> None:
    text = '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call> and {"name": "other", "arguments": {}}'
    assert extract_tool_calls(text, OFFERED) is None
    mixed = extract_tool_calls(
        '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call><tool_call>{"name": "bash", '
        '"arguments": {"command": "ls"}}</tool_call>', OFFERED)
    assert mixed is not None and [c.name for c in mixed.calls] == ["bash"]
    assert mixed.content == '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'


def test_malformed_markup_is_text_but_an_offered_call_with_unreadable_arguments_is_an_error() -> None:
    assert extract_tool_calls("<tool_call>not json at all</tool_call>", OFFERED) is None
    assert extract_tool_calls('[TOOL_CALLS] oops {"a": 1', OFFERED) is None
    assert extract_tool_calls("A plain answer with {braces} and no call.", OFFERED) is None
    for broken in ('<tool_call>{"name": "bash", "arguments": {"command": </tool_call>',
                   '{"name": "bash", "arguments": "{not json"}',
                   '[TOOL_CALLS] [{"name": "bash", "arguments": {',
                   '<|python_tag|>{"name": "bash", "parameters": [1, 2]}'):
        with pytest.raises(LLMError) as info:
            extract_tool_calls(broken, OFFERED)
        assert info.value.reason == "llm_malformed" and info.value.details["tool"] == "bash"


def test_the_configured_format_decides() -> None:
    hermes = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    assert extract_tool_calls(hermes, OFFERED, "native") is None
    assert extract_tool_calls(hermes, OFFERED, "mistral") is None
    assert extract_tool_calls(hermes, frozenset(), "auto") is None  # no tools offered, no calls


def test_role_setting_selects_the_format() -> None:
    settings = role_settings("teacher", {"SKILLGYM_TEACHER_LLM_BASE_URL": "http://127.0.0.1:9/v1",
                                         "SKILLGYM_TEACHER_LLM_TOOL_CALL_FORMAT": "hermes"})
    assert settings is not None and settings.tool_call_format == "hermes"
    default = role_settings("teacher", {"SKILLGYM_TEACHER_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert default is not None and default.tool_call_format == "auto"


def test_client_reads_hermes_text_from_a_server_without_a_tool_parser(tmp_path: Path) -> None:
    hermes = ('I will list the workspace.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
              '\n<tool_call>\n{"name": "bash", "arguments": {"command": "cat notes.txt"}}\n</tool_call>')
    transcript = tmp_path / "llm.jsonl"
    with ScriptedLLMServer(Sequence([assistant(hermes)], final="All done.")) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url), transcript=transcript)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "look around"}]
        first = client.chat(messages, tools=[BASH_TOOL])
        assert first.tool_call_format == "hermes"
        assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
            ("call_0", "bash", {"command": "ls"}), ("call_1", "bash", {"command": "cat notes.txt"})]
        assert first.content == "I will list the workspace."
        message = first.assistant_message()
        assert message["content"] == "I will list the workspace."
        assert [c["function"]["arguments"] for c in message["tool_calls"]] == [
            '{"command": "ls"}', '{"command": "cat notes.txt"}']
        messages += [message, *({"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in first.tool_calls)]
        second = client.chat(messages, tools=[BASH_TOOL])
        assert second.tool_calls == [] and second.tool_call_format is None and second.content == "All done."
        assert server.requests[1]["messages"][1]["tool_calls"][1]["id"] == "call_1"
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [r["tool_call_format"] for r in records] == ["hermes", None]


def test_client_prefers_native_calls_and_native_mode_ignores_text() -> None:
    native = assistant('<tool_call>{"name": "bash", "arguments": {"command": "rm"}}</tool_call>',
                       [tool_call("bash", {"command": "ls"}, call_id="native-1")])
    with ScriptedLLMServer(lambda body: native) as server:
        response = LLMClient(LLMSettings(base_url=server.base_url)).chat([], tools=[BASH_TOOL])
        assert response.tool_call_format == "native" and [c.id for c in response.tool_calls] == ["native-1"]
    text_only = assistant('<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>')
    with ScriptedLLMServer(lambda body: text_only) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, tool_call_format="native"))
        response = client.chat([], tools=[BASH_TOOL])
        assert response.tool_calls == [] and response.content.startswith("<tool_call>")


def test_client_raises_typed_on_an_offered_call_with_unreadable_arguments(tmp_path: Path) -> None:
    broken = assistant('<tool_call>{"name": "bash", "arguments": "{oops"}</tool_call>')
    transcript = tmp_path / "llm.jsonl"
    with ScriptedLLMServer(lambda body: broken) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, max_retries=1), transcript=transcript)
        with pytest.raises(LLMError) as info:
            client.chat([], tools=[BASH_TOOL])
    assert info.value.reason == "llm_malformed"
    assert "unreadable arguments" in json.loads(transcript.read_text())["error"]
