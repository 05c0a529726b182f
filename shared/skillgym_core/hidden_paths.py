"""Paths an agent never sees: the reference solution, the verifier's tests and its output.

Text that names one of them (``python3 /solution/fix.py``, ``cat /tests/test.sh``) cannot have
been produced by an agent working on the task, so it must not reach a training example."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

HIDDEN_PATHS = ("/solution", "/tests", "/logs/verifier")

# A hidden root starts a path: it is not the tail of a longer one (``/app/tests``, ``./tests``)
# and does not run on into a longer name (``/testsuite``). A JSON-escaped newline or tab
# (``\n/tests``) still counts as a separator.
_HIDDEN = re.compile(
    r"(?:(?<![\w.~/$}-])|(?<=\\n)|(?<=\\t))(" + "|".join(re.escape(p) for p in HIDDEN_PATHS) + r")(?![\w-])"
)


def hidden_paths_in_text(text: str) -> set[str]:
    return {match.group(1) for match in _HIDDEN.finditer(text)}


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def hidden_paths_in(value: Any) -> list[str]:
    """The hidden roots named anywhere in ``value`` (strings, nested dicts and lists), sorted."""
    found: set[str] = set()
    for text in _strings(value):
        found |= hidden_paths_in_text(text)
    return sorted(found)
