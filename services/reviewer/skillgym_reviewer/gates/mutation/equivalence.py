"""Meaning-preserving transformations a task declares for its outputs, in ``tests/equivalences.json``
(``{"answer.json": ["reorder_lists"], "*.md": ["whitespace"]}``) or under ``[metadata.review]
equivalences`` in ``task.toml``. Re-serialising JSON (indent, key order) and trailing whitespace
always preserve meaning.

A declared equivalence does two things: mutants it covers are not held against the verifier,
and a rewrite of the reference output under it becomes a valid alternative the verifier must
accept (else the verifier is too strict)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SkillGymError

from skillgym_reviewer.gates.mutation.generate import file_kind
from skillgym_reviewer.gates.mutation.model import Effect, Mutant
from skillgym_reviewer.gates.mutation.structured import dump_json_like
from skillgym_reviewer.gates.mutation.tables import Table

DECLARATION_FILE = "equivalences.json"
KNOWN: dict[str, str] = {
    "reformat_json": "JSON re-serialised: indent, separators, key order",
    "trailing_whitespace": "spaces at the ends of lines",
    "whitespace": "runs of spaces and blank lines",
    "reorder_lists": "the order of list elements, text lines or table rows",
    "reorder_lines": "the order of text lines",
    "reorder_rows": "the order of table rows",
    "reorder_columns": "table columns moved together with their headers",
    "case": "the letter case of values",
    "number_format": "how numbers are written (5, 5.0, 5.00)",
}
ALWAYS = ("reformat_json", "trailing_whitespace")
COVERS: dict[str, frozenset[Effect]] = {
    "reorder_lists": frozenset({"order"}),
    "reorder_lines": frozenset({"order"}),
    "reorder_rows": frozenset({"order"}),
}
LINE_SAFE = ("trailing_whitespace", "reorder_lists", "reorder_lines")  # rewrites that keep each line's content
_INT = re.compile(r"(?<![\w.-])(-?\d+)(?![\w.])")
_DECIMAL = re.compile(r"(?<![\w.-])(-?\d+\.\d+)(?![\w.])")


class EquivalenceError(SkillGymError):
    """The task's equivalence declaration cannot be used."""

    reason = "equivalences_invalid"


def _names(origin: str, pattern: str, raw: Any) -> set[str]:
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise EquivalenceError(f"{origin}: {pattern!r} must map to a list of names", origin=origin)
    unknown = sorted(set(names) - set(KNOWN))
    if unknown:
        raise EquivalenceError(
            f"{origin}: unknown equivalence {', '.join(unknown)} for {pattern!r} (known: {', '.join(KNOWN)})",
            reason="unknown_equivalence", origin=origin, unknown=unknown,
        )
    return set(names)


@dataclass
class Equivalences:
    declared: dict[str, set[str]] = field(default_factory=dict)  # file pattern -> names

    @classmethod
    def load(cls, task: TaskDir, metadata_review: dict[str, Any]) -> Equivalences:
        sources: list[tuple[str, Any]] = []
        path = task.tests / DECLARATION_FILE
        if path.is_file():
            try:
                sources.append((f"tests/{DECLARATION_FILE}", json.loads(path.read_text(encoding="utf-8"))))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise EquivalenceError(f"tests/{DECLARATION_FILE} is not JSON: {exc}") from exc
        if "equivalences" in metadata_review:
            sources.append(("task.toml [metadata.review] equivalences", metadata_review["equivalences"]))
        declared: dict[str, set[str]] = {}
        for origin, raw in sources:
            if not isinstance(raw, dict):
                raise EquivalenceError(f"{origin} must map file patterns to lists of names", origin=origin)
            for pattern, names in raw.items():
                declared.setdefault(str(pattern), set()).update(_names(origin, str(pattern), names))
        return cls(declared)

    def declared_for(self, rel: str) -> set[str]:
        name = PurePosixPath(rel).name
        return {n for pattern, names in self.declared.items() if fnmatchcase(rel, pattern) or fnmatchcase(name, pattern)
                for n in names}

    def covering(self, mutant: Mutant) -> str | None:
        """The declared equivalence under which ``mutant`` is not wrong, or None."""
        return next((n for n in sorted(self.declared_for(mutant.file)) if mutant.effect in COVERS.get(n, ())), None)

    def rewrites(self, rel: str, data: bytes) -> list[tuple[str, bytes]]:
        """The reference output rewritten under every equivalence that applies to it (declared
        ones and the defaults), each a valid alternative; rewrites that change nothing are left out."""
        kind = file_kind(rel, data)
        out = []
        for name in sorted(self.declared_for(rel) | set(ALWAYS)):
            rewritten = rewrite(name, kind, rel, data)
            if rewritten is not None and rewritten != data:
                out.append((f"{rel}:{name}", rewritten))
        return out


def _map_tree(value: Any, *, lists: bool = False, strings: bool = False, numbers: bool = False, keys: bool = False) -> Any:
    def again(item: Any) -> Any:
        return _map_tree(item, lists=lists, strings=strings, numbers=numbers, keys=keys)

    if isinstance(value, dict):
        items = [(k, again(v)) for k, v in value.items()]
        return dict(reversed(items) if keys else items)
    if isinstance(value, list):
        mapped = [again(v) for v in value]
        return mapped[::-1] if lists else mapped
    if strings and isinstance(value, str):
        return value.upper()
    if numbers and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _rewrite_json(name: str, text: str) -> str | None:
    tree = json.loads(text)
    if name == "reformat_json":
        return json.dumps(_map_tree(tree, keys=True), indent=3, ensure_ascii=False) + "\n"
    changes = {"reorder_lists": {"lists": True}, "case": {"strings": True}, "number_format": {"numbers": True}}
    if name not in changes:
        return None
    return dump_json_like(text, _map_tree(tree, **changes[name]))


def _rewrite_table(name: str, rel: str, text: str) -> str | None:
    table = Table(rel, text)
    head, body = table.rows[: table.data_start], table.rows[table.data_start :]
    if name in ("reorder_lists", "reorder_rows"):
        return table.dump(head + body[::-1])
    if name == "reorder_columns":
        return table.dump([row[::-1] for row in table.rows])
    if name == "case":
        return table.dump(head + [[cell.upper() for cell in row] for row in body])
    if name == "number_format":
        return table.dump(head + [[_number_format(cell) for cell in row] for row in body])
    return None


def _number_format(text: str) -> str:
    text = _DECIMAL.sub(lambda m: m.group(1) + "0", text)
    return _INT.sub(lambda m: m.group(1) + ".0", text) if "." not in text else text


def _rewrite_text(name: str, text: str) -> str | None:
    lines = text.splitlines(keepends=True)
    if name == "trailing_whitespace":
        return "".join(line.rstrip("\r\n") + (" " if line.strip() else "") + line[len(line.rstrip("\r\n")) :] for line in lines)
    if name == "whitespace":
        return "".join(re.sub(r"(?<=\S) (?=\S)", "  ", line) + ("\n" if line.strip() else "") for line in lines)
    if name in ("reorder_lists", "reorder_lines"):
        content = [line if line.endswith("\n") else line + "\n" for line in lines if line.strip()]
        return "".join(content[::-1])
    if name == "case":
        return text.upper()
    if name == "number_format":
        return "".join(_number_format(line) for line in lines)
    return None


def rewrite(name: str, kind: str, rel: str, data: bytes) -> bytes | None:
    """``data`` rewritten under equivalence ``name``, or None where it does not apply to its kind."""
    if kind == "binary":
        return None
    text = data.decode("utf-8")
    result: str | None
    if kind == "json":
        result = _rewrite_json(name, text)
    elif kind == "table":
        result = _rewrite_table(name, rel, text)
    elif kind in ("text", "markdown") or (kind == "jsonl" and name in LINE_SAFE) or (
        kind == "python" and name == "trailing_whitespace"
    ):
        result = _rewrite_text(name, text)
    else:
        result = None
    return None if result is None else result.encode()
