"""Answers told piecemeal: the instruction states most of the values the task asks the agent
to work out (each short, so no whole-file or long-constant match finds them), or something the
agent can read holds a prefix of an id it must find.

A value counts as worked out when the initial workspace does not hold it (names and dates read
from the inputs are not answers). Small integers and single letters say too little to count."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,}(?![0-9A-Za-z])")
HEX_ID = re.compile(r"^[0-9a-f]{12,}$")
MIN_TOLD = 3  # worked-out values the instruction must state before it counts as telling the answer
MIN_PREFIX = 7  # the shortest id prefix tools print


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None and not isinstance(value, bool):
        yield value


def parsed(rel: str, data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
        return yaml.safe_load(text) if rel.endswith((".yaml", ".yml")) else json.loads(text)
    except (UnicodeDecodeError, ValueError, yaml.YAMLError):
        return None


def _numbers(text: str) -> set[float]:
    return {float(token) for token in _NUMBER.findall(text)}


def _telling(value: Any) -> bool:
    if isinstance(value, int | float):
        return abs(value) >= 2 and not (isinstance(value, int) and abs(value) < 10)
    return isinstance(value, str) and len(value.strip()) >= 3


class VisibleText:
    def __init__(self, instruction: str, inputs: Mapping[str, str]) -> None:
        self.instruction = instruction.casefold()
        self.instruction_numbers = _numbers(instruction)
        self.inputs = "\n".join(inputs.values()).casefold()
        self.input_numbers = _numbers(self.inputs)

    def in_inputs(self, value: Any) -> bool:
        if isinstance(value, int | float):
            return float(value) in self.input_numbers
        return str(value).casefold() in self.inputs

    def in_instruction(self, value: Any) -> bool:
        if isinstance(value, int | float):
            return float(value) in self.instruction_numbers
        return str(value).casefold() in self.instruction


def told_values(outputs: Mapping[str, bytes], visible: VisibleText) -> dict[str, list[str]]:
    """Per output file, the worked-out values the instruction states, where they are at least
    ``MIN_TOLD`` and half of that file's distinct worked-out values."""
    found: dict[str, list[str]] = {}
    for rel, data in outputs.items():
        tree = parsed(rel, data)
        if not isinstance(tree, dict | list):
            continue
        worked = {json.dumps(v): v for v in _leaves(tree) if _telling(v) and not visible.in_inputs(v)}
        told = [str(v) for v in worked.values() if visible.in_instruction(v)]
        if len(told) >= MIN_TOLD and 2 * len(told) >= len(worked):
            found[rel] = told
    return found


def id_prefixes(outputs: Mapping[str, bytes], texts: Mapping[str, str]) -> list[str]:
    """Where a visible text holds a prefix (``MIN_PREFIX`` hex digits or more) of a full hex id
    the answer has and the inputs do not spell out."""
    ids = {str(v).lower() for rel, data in outputs.items() for v in _leaves(parsed(rel, data))
           if isinstance(v, str) and HEX_ID.match(v.lower()) and any(c.isalpha() for c in v)
           and any(c.isdigit() for c in v)}
    found = []
    for name, text in texts.items():
        for token in _HEX_TOKEN.findall(text):
            full = next((i for i in ids if i.startswith(token.lower()) and token.lower() != i), None)
            if full is not None:
                found.append(f"{name} holds {token!r}, a prefix of the answer's id {full[:12]}...")
    return found
