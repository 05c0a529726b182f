"""Tool calls are checked before anything runs: a call that is not one of the tools, or whose
arguments do not fit, is malformed and never reaches the sandbox."""

from __future__ import annotations

import pytest
from skillgym_envserver.tools import parse_call


def test_well_formed_calls_give_their_text_arguments() -> None:
    assert parse_call("bash", {"command": "ls"}) == {"command": "ls"}
    assert parse_call("write_file", '{"path": "a.txt", "content": ""}') == {"path": "a.txt", "content": ""}


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("rm", {"path": "x"}, "unknown tool 'rm'"),
        ("bash", "{not json", "not valid JSON"),
        ("bash", "[1, 2]", "must be a JSON object"),
        ("bash", {}, "missing command"),
        ("read_file", {"path": "a", "mode": "r"}, "unexpected mode"),
        ("write_file", {"path": "a", "content": 3}, "content must be text"),
    ],
)
def test_malformed_calls_say_what_is_wrong(tool: str, arguments: object, says: str) -> None:
    verdict = parse_call(tool, arguments)  # type: ignore[arg-type]
    assert isinstance(verdict, str)
    assert says in verdict
