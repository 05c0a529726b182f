"""Tool calls a server wrote as text in ``message.content`` because it runs without a tool
parser: Hermes/Qwen ``<tool_call>`` blocks, Llama 3 JSON (after ``<|python_tag|>``), Mistral
``[TOOL_CALLS]`` and a bare or fenced JSON object. Only names among the offered tools count;
markup that does not parse is text, except a call to an offered tool whose arguments cannot be
read, which is an ``llm_malformed`` error rather than a silently dropped call."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal, get_args

from skillgym_core.llm.errors import LLMError

ToolCallFormat = Literal["native", "auto", "hermes", "llama3", "mistral", "json"]
TOOL_CALL_FORMATS: tuple[str, ...] = get_args(ToolCallFormat)

_DECODER = json.JSONDecoder()
_INVALID = object()
_WHITESPACE = re.compile(r"\s*")
_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_PYTHON_TAG = "<|python_tag|>"
_LLAMA_END = re.compile(r"\s*<\|(?:eom_id|eot_id)\|>")
_MISTRAL_MARK = "[TOOL_CALLS]"
_MISTRAL_NAMED = re.compile(r"\[TOOL_CALLS\]\s*([A-Za-z_][\w.-]*)\s*\[ARGS\]")
_FENCED_BLOCK = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.S)
_CALL_SEPARATOR = re.compile(r"\s*;")
_NAME_FIELD = re.compile(r'"name"\s*:\s*"([^"]+)"')
# the opening of a call (or of a list of calls) whose JSON did not parse
_CALL_OPENING = re.compile(r'\[?\s*\{\s*"name"\s*:\s*"([^"]+)"')

Span = tuple[int, int]


@dataclass(frozen=True)
class TextToolCall:
    name: str
    arguments: dict[str, Any]
    raw_arguments: str


@dataclass(frozen=True)
class TextToolCalls:
    format: str
    calls: list[TextToolCall]
    content: str  # the text with the call markup removed


def offered_tool_names(tools: list[dict[str, Any]] | None) -> frozenset[str]:
    """The function names of an OpenAI ``tools`` list."""
    names = set()
    for tool in tools or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return frozenset(names)


def extract_tool_calls(content: str, offered: Collection[str], fmt: ToolCallFormat = "auto") -> TextToolCalls | None:
    """The calls to offered tools written in ``content`` in ``fmt`` (``auto``: the first format
    that yields any), or None when there are none (always for ``native``)."""
    if fmt == "native" or not offered or not content:
        return None
    detecting = fmt == "auto"
    for name in _DETECTION_ORDER if detecting else (fmt,):
        calls, spans = _PARSERS[name](content, offered, detecting)
        if calls:
            return TextToolCalls(name, calls, _without(content, spans))
    return None


def _malformed(name: str, detail: str) -> LLMError:
    return LLMError(f"tool call {name!r} in the response text has unreadable arguments: {detail}",
                    reason="llm_malformed", tool=name)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return _INVALID


def _decode_at(text: str, pos: int) -> tuple[Any, int]:
    """The JSON value starting at ``pos`` (after whitespace) and where it ends."""
    match = _WHITESPACE.match(text, pos)
    start = match.end() if match else pos
    try:
        return _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return _INVALID, start


def _reject_if_offered(match: re.Match[str] | None, offered: Collection[str]) -> None:
    """A call that names an offered tool but does not parse: an error, not text."""
    if match is not None and match.group(1) in offered:
        raise _malformed(match.group(1), "the call is not valid JSON")


def _call(value: Any, offered: Collection[str]) -> TextToolCall | None:
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]  # the OpenAI shape, written out as text
    if not isinstance(value, dict):
        return None
    name = value.get("name")
    if not isinstance(name, str) or name not in offered:
        return None
    arguments = value["arguments"] if "arguments" in value else value.get("parameters")
    if arguments is None or arguments == "":
        return TextToolCall(name, {}, "{}")
    if isinstance(arguments, str):
        parsed = _loads(arguments)
        if not isinstance(parsed, dict):
            raise _malformed(name, "the arguments string is not a JSON object")
        return TextToolCall(name, parsed, arguments)
    if not isinstance(arguments, dict):
        raise _malformed(name, f"the arguments are a {type(arguments).__name__}, not an object")
    return TextToolCall(name, arguments, json.dumps(arguments))


def _calls_in(value: Any, offered: Collection[str]) -> list[TextToolCall]:
    items = value if isinstance(value, list) else [value]
    return [call for item in items if (call := _call(item, offered)) is not None]


def _wrapped_calls(pattern: re.Pattern[str], text: str, offered: Collection[str]) -> tuple[list[TextToolCall], list[Span]]:
    """Calls in the blocks ``pattern`` finds, its first group holding the JSON."""
    calls: list[TextToolCall] = []
    spans: list[Span] = []
    for block in pattern.finditer(text):
        value, _ = _decode_at(block.group(1), 0)
        if value is _INVALID:
            _reject_if_offered(_NAME_FIELD.search(block.group(1)), offered)
            continue
        found = _calls_in(value, offered)
        if found:
            calls += found
            spans.append(block.span())
    return calls, spans


def _hermes(text: str, offered: Collection[str], detecting: bool) -> tuple[list[TextToolCall], list[Span]]:
    return _wrapped_calls(_HERMES_BLOCK, text, offered)


def _llama3(text: str, offered: Collection[str], detecting: bool) -> tuple[list[TextToolCall], list[Span]]:
    """One or more objects (``;``-separated) after ``<|python_tag|>``, or opening the text. While
    detecting, untagged objects count only in Llama's own shape (``parameters``)."""
    tag = text.find(_PYTHON_TAG)
    start = tag if tag >= 0 else len(text) - len(text.lstrip())
    pos = tag + len(_PYTHON_TAG) if tag >= 0 else start
    values: list[Any] = []
    while True:
        value, end = _decode_at(text, pos)
        if value is _INVALID:
            _reject_if_offered(_CALL_OPENING.match(text, end), offered)
            break
        values.append(value)
        pos = end
        separator = _CALL_SEPARATOR.match(text, pos)
        if separator is None:
            break
        pos = separator.end()
    if detecting and tag < 0 and not all(isinstance(v, dict) and "parameters" in v for v in values):
        return [], []
    calls = [call for value in values for call in _calls_in(value, offered)]
    end_token = _LLAMA_END.match(text, pos)
    return (calls, [(start, end_token.end() if end_token else pos)]) if calls else ([], [])


def _mistral(text: str, offered: Collection[str], detecting: bool) -> tuple[list[TextToolCall], list[Span]]:
    """``[TOOL_CALLS] [{...}, ...]``, or the newer ``[TOOL_CALLS]name[ARGS]{...}``."""
    calls: list[TextToolCall] = []
    spans: list[Span] = []
    start = text.find(_MISTRAL_MARK)
    while start >= 0:
        named = _MISTRAL_NAMED.match(text, start)
        if named is not None:
            arguments, end = _decode_at(text, named.end())
            if arguments is _INVALID:
                _reject_if_offered(named, offered)
            value = {"name": named.group(1), "arguments": arguments}
        else:
            value, end = _decode_at(text, start + len(_MISTRAL_MARK))
            if value is _INVALID:
                _reject_if_offered(_CALL_OPENING.match(text, end), offered)
        found = [] if value is _INVALID else _calls_in(value, offered)
        if found:
            calls += found
            spans.append((start, end))
        start = text.find(_MISTRAL_MARK, max(end, start + 1))
    return calls, spans


def _json(text: str, offered: Collection[str], detecting: bool) -> tuple[list[TextToolCall], list[Span]]:
    """Objects in ```json fences; without any, objects anywhere in the text."""
    calls, spans = _wrapped_calls(_FENCED_BLOCK, text, offered)
    if calls:
        return calls, spans
    start = text.find("{")
    while start >= 0:
        value, end = _decode_at(text, start)
        if value is _INVALID:
            _reject_if_offered(_CALL_OPENING.match(text, start), offered)
            end = start + 1
        elif (call := _call(value, offered)) is not None:
            calls.append(call)
            spans.append((start, end))
        start = text.find("{", end)
    return calls, spans


def _without(text: str, spans: list[Span]) -> str:
    kept, pos = [], 0
    for start, end in sorted(spans):
        kept.append(text[pos:start])
        pos = max(pos, end)
    kept.append(text[pos:])
    return "".join(kept).strip()


_Parser = Callable[[str, Collection[str], bool], tuple[list[TextToolCall], list[Span]]]
_PARSERS: dict[str, _Parser] = {"hermes": _hermes, "mistral": _mistral, "llama3": _llama3, "json": _json}
_DETECTION_ORDER = ("hermes", "mistral", "llama3", "json")
