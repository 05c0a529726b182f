"""Which mutants a task gets: each output file is read as its kind (JSON, JSON Lines, YAML,
table, Python, Markdown, text or binary), every operator of that kind draws a few sites, and a
cap spreads the mutants over files and operators in turn, after the coverage mutants that reach
every region of every file."""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Literal

import yaml

from skillgym_reviewer.gates.mutation.model import COVER, Mutant
from skillgym_reviewer.gates.mutation.pycode import binary_mutants, python_mutants
from skillgym_reviewer.gates.mutation.structured import json_mutants, jsonl_mutants, yaml_mutants
from skillgym_reviewer.gates.mutation.tables import table_mutants
from skillgym_reviewer.gates.mutation.text import text_mutants

FileKind = Literal["json", "jsonl", "yaml", "table", "python", "markdown", "text", "binary"]
MAX_PARSED_BYTES = 2 * 1024 * 1024  # larger files only get byte-level mutants


def _decoded(data: bytes) -> str | None:
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _parses(kind: FileKind, text: str) -> bool:
    try:
        if kind == "json":
            json.loads(text)
        elif kind == "jsonl":
            for line in text.splitlines():
                if line.strip():
                    json.loads(line)
        elif kind == "yaml":
            return isinstance(yaml.safe_load(text), dict | list)
        elif kind == "python":
            ast.parse(text)
    except (ValueError, yaml.YAMLError, SyntaxError, RecursionError):
        return False
    return True


def file_kind(rel: str, data: bytes) -> FileKind:
    """The kind a file is mutated as: by suffix, confirmed by parsing; text that does not parse
    as its suffix says falls back to lines."""
    text = _decoded(data) if len(data) <= MAX_PARSED_BYTES else None
    if text is None:
        return "binary"
    suffix = PurePosixPath(rel).suffix.lower()
    by_suffix: dict[str, FileKind] = {
        ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".yaml": "yaml", ".yml": "yaml",
        ".csv": "table", ".tsv": "table", ".py": "python", ".md": "markdown", ".markdown": "markdown",
    }
    kind = by_suffix.get(suffix)
    if kind is None and text.lstrip()[:1] in ("{", "["):
        kind = "json"
    if kind is not None and _parses(kind, text):
        return kind
    return "markdown" if kind == "markdown" else "text"


def file_mutants(rel: str, data: bytes, seed: int) -> dict[str, list[Mutant]]:
    """Every drawn mutant of one file, grouped by operator."""
    kind = file_kind(rel, data)
    if kind == "binary":
        return binary_mutants(rel, data, seed)
    text = data.decode("utf-8")
    if kind == "json":
        return json_mutants(rel, text, seed)
    if kind == "yaml":
        return yaml_mutants(rel, text, seed)
    if kind == "table":
        return table_mutants(rel, text, seed)
    if kind == "python":
        return python_mutants(rel, text, seed)
    grouped = text_mutants(rel, text, seed, markdown=kind == "markdown")
    if kind == "jsonl":
        grouped.update(jsonl_mutants(rel, text, seed))
    return grouped


def _interleave(groups: Iterable[list[Mutant]]) -> list[Mutant]:
    """First site of every group, then the second of every group, and so on."""
    queues = [list(group) for group in groups]
    out: list[Mutant] = []
    depth = 0
    while any(depth < len(queue) for queue in queues):
        out += [queue[depth] for queue in queues if depth < len(queue)]
        depth += 1
    return out


def spread(per_file: Mapping[str, Mapping[str, list[Mutant]]], cap: int) -> list[Mutant]:
    """At most ``cap`` mutants: first the ones that reach every region of every file (each key
    path of a tree, each column and the header of a table; marked ``cover``), files in turn, then
    the others, taken from the files in turn and, within a file, from its operators in turn; a
    mutant whose content repeats another's is dropped."""
    cover: list[list[Mutant]] = []
    queues: list[list[Mutant]] = []
    for _, grouped in sorted(per_file.items()):
        queue = _interleave(ms for op, ms in grouped.items() if op != COVER)
        regions = [dataclasses.replace(m, cover=True) for m in grouped.get(COVER, [])]
        first = regions or queue[:1]  # a file without regions still gets a (scored) mutant early
        cover.append(first)
        queues.append(queue[1:] if not regions else queue)
    chosen: list[Mutant] = []
    seen: set[tuple[str, bytes]] = set()
    for mutant in [*_interleave(cover), *_interleave(queues)]:
        if len(chosen) >= cap:
            break
        if (mutant.file, mutant.content) not in seen:
            seen.add((mutant.file, mutant.content))
            chosen.append(mutant)
    return chosen


def output_mutants(outputs: Mapping[str, bytes], seed: int, cap: int) -> list[Mutant]:
    per_file = {rel: file_mutants(rel, data, seed) for rel, data in outputs.items()}
    per_file = {rel: {op: [m for m in ms if m.content != outputs[rel]] for op, ms in grouped.items()}
                for rel, grouped in per_file.items()}
    return spread(per_file, cap)
