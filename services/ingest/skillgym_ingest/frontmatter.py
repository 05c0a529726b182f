"""Lenient SKILL.md parsing: YAML front matter plus a Markdown body.

Real skills carry BOMs, CRLF line ends, unquoted ``: `` inside descriptions and missing or
unterminated front matter. Each of those is parsed as well as possible and reported as a
:class:`Diagnostic`; nothing here raises on bad input."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from skillgym_core.contracts.skill import Diagnostic

Severity = Literal["error", "warning", "info"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_KEY_LINE = re.compile(r"^([A-Za-z_][\w.-]*)\s*:(?:\s(.*)|)$")
_CLOSERS = {"---", "..."}
# "key: value" lines that YAML reads as {key: value} with both strings: a letter first (no
# number, date or indicator), printable ASCII, no ": ", " #" or trailing ":", not a YAML word.
_SIMPLE_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]{0,100}): ([A-Za-z][ -~]*)")
_YAML_WORDS = frozenset({
    "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON",
    "off", "Off", "OFF", "null", "Null", "NULL",
})


@dataclass
class ParsedSkillMd:
    front_matter: dict[str, Any]
    body: str
    body_line: int  # 1-based line of the first body line in the file
    diagnostics: list[Diagnostic] = field(default_factory=list)
    has_front_matter: bool = False


def decode_text(raw: bytes, file: str, diagnostics: list[Diagnostic]) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        diagnostics.append(_diag("bom", "file starts with a UTF-8 byte-order mark", "info", file))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", "replace")
        diagnostics.append(
            _diag("not_utf8", f"file is not valid UTF-8 (byte {exc.start}); decoded with replacement",
                  "warning", file)
        )
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        diagnostics.append(_diag("crlf", "file uses CR/CRLF line ends", "info", file))
    if "\x00" in text:
        text = text.replace("\x00", "")
        diagnostics.append(_diag("nul_bytes", "file contains NUL bytes", "warning", file))
    return text


def parse_skill_md(raw: bytes, file: str = "SKILL.md") -> ParsedSkillMd:
    diagnostics: list[Diagnostic] = []
    text = decode_text(raw, file, diagnostics)
    lines = text.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start >= len(lines) or lines[start].rstrip() != "---":
        diagnostics.append(_diag("front_matter_missing", "SKILL.md has no YAML front matter", "error", file, 1))
        return ParsedSkillMd({}, text, 1, diagnostics, False)
    if start:
        diagnostics.append(_diag("front_matter_late", "blank lines before the front matter", "info", file, 1))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].rstrip() in _CLOSERS), None)
    if end is None:
        diagnostics.append(
            _diag("front_matter_unterminated", "front matter has no closing '---'", "error", file, start + 1)
        )
        # Take the leading key/value block as front matter, the rest as body.
        end = start + 1
        while end < len(lines) and (_KEY_LINE.match(lines[end]) or lines[end].startswith((" ", "\t", "-"))):
            end += 1
        block = lines[start + 1 : end]
        body_from = end
    else:
        block = lines[start + 1 : end]
        body_from = end + 1
    front = _parse_block(block, start + 2, file, diagnostics)
    body = "\n".join(lines[body_from:])
    return ParsedSkillMd(front, body, body_from + 1, diagnostics, True)


def _parse_block(block: list[str], first_line: int, file: str, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    source = "\n".join(block)
    if not source.strip():
        diagnostics.append(_diag("front_matter_empty", "front matter is empty", "error", file, first_line))
        return {}
    simple = simple_mapping(block)
    if simple is not None:
        return simple
    try:
        loaded = yaml.load(source, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark is not None else first_line
        diagnostics.append(
            _diag("front_matter_yaml_invalid",
                  f"front matter is not valid YAML ({getattr(exc, 'problem', None) or exc}); read leniently",
                  "warning", file, line)
        )
        return _lenient_block(block, first_line, file, diagnostics)
    except RecursionError:
        diagnostics.append(_diag("front_matter_too_deep", "front matter nests too deeply", "error", file))
        return {}
    if not isinstance(loaded, dict):
        diagnostics.append(
            _diag("front_matter_not_mapping",
                  f"front matter is a {type(loaded).__name__}, not a mapping; read leniently",
                  "warning", file, first_line)
        )
        return _lenient_block(block, first_line, file, diagnostics)
    return {str(key): to_jsonable(value) for key, value in loaded.items()}


def simple_mapping(block: list[str]) -> dict[str, str] | None:
    """What YAML makes of a block of plain ``key: value`` lines, without running YAML; None
    when any line is outside the subset where that is certain (YAML then reads the block)."""
    result: dict[str, str] = {}
    for line in block:
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return None
        key, value = match.group(1), match.group(2).rstrip(" ")
        if key in _YAML_WORDS or value in _YAML_WORDS or ": " in value or " #" in value or value.endswith(":"):
            return None
        result[key] = value
    return result or None


def _lenient_block(block: list[str], first_line: int, file: str, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    """Split the block at top-level ``key:`` lines and parse each entry on its own.

    An entry that still fails YAML is kept as the raw text after the first ``: ``, which is
    what an author writing ``description: Use when: X`` meant."""
    entries: list[tuple[str, int, list[str]]] = []
    for offset, line in enumerate(block):
        match = _KEY_LINE.match(line)
        if match and not line[:1].isspace():
            entries.append((match.group(1), first_line + offset, [line]))
        elif entries:
            entries[-1][2].append(line)
    result: dict[str, Any] = {}
    for key, line_no, entry_lines in entries:
        try:
            parsed = yaml.load("\n".join(entry_lines), Loader=_Loader)
        except (yaml.YAMLError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and key in parsed:
            value = to_jsonable(parsed[key])
        else:
            first = entry_lines[0].split(":", 1)[1].strip()
            rest = " ".join(item.strip() for item in entry_lines[1:] if item.strip())
            value = " ".join(part for part in (first, rest) if part)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            diagnostics.append(
                _diag("front_matter_value_raw", f"'{key}' read as raw text (unquoted ': ' or bad YAML)",
                      "warning", file, line_no)
            )
        if key in result:
            diagnostics.append(_diag("front_matter_duplicate_key", f"'{key}' appears twice", "warning",
                                     file, line_no))
        result[key] = value
    if not result:
        diagnostics.append(_diag("front_matter_unreadable", "no key: value lines in front matter", "error",
                                 file, first_line))
    return result


def to_jsonable(value: Any, depth: int = 0) -> Any:
    """Make YAML values JSON-safe: dates become ISO strings, keys become strings."""
    if depth > 20:
        return str(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [to_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    return str(value)


def _diag(code: str, message: str, severity: Severity, file: str | None, line: int | None = None) -> Diagnostic:
    return Diagnostic(code=code, message=message, severity=severity, file=file, line=line)
