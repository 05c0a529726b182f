"""Fixes shipped as patches: a unified diff in the initial workspace that, applied to the
workspace's own files, gives the reference solution's result. The agent would only have to
apply it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_reviewer.gates.validity import changed_files

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
MAX_PATCH_BYTES = 1024 * 1024


@dataclass
class FilePatch:
    path: str
    hunks: list[tuple[int, list[str]]] = field(default_factory=list)  # (first old line, body lines)


def _target(header: str) -> str:
    path = header[4:].split("\t", 1)[0].strip()
    return re.sub(r"^[ab]/", "", path)


def parse(text: str) -> list[FilePatch]:
    """The file sections of a unified diff (``---``/``+++`` headers, ``@@`` hunks)."""
    patches: list[FilePatch] = []
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("+++ ") and i and lines[i - 1].startswith("--- "):
            target = _target(line)
            patches.append(FilePatch(target if target != "/dev/null" else _target(lines[i - 1])))
        elif (match := _HUNK.match(line)) and patches:
            patches[-1].hunks.append((int(match.group(1)), []))
        elif patches and patches[-1].hunks and line[:1] in (" ", "+", "-", "\\"):
            patches[-1].hunks[-1][1].append(line)
        elif patches and patches[-1].hunks and line in ("\n", "\r\n"):
            patches[-1].hunks[-1][1].append(" " + line)  # a context line whose space was trimmed
    return [p for p in patches if p.hunks]


def apply(original: str, patch: FilePatch) -> str | None:
    """``original`` with ``patch``'s hunks applied, or None where its context does not match."""
    lines = original.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    for start, body in patch.hunks:
        first = max(start - 1, 0)
        if first < at:
            return None
        out += lines[at:first]
        at = first
        for line in body:
            tag, content = line[:1], line[1:]
            if tag == "\\":
                continue
            if tag in (" ", "-"):
                if at >= len(lines) or lines[at].rstrip("\r\n") != content.rstrip("\r\n"):
                    return None
                if tag == " ":
                    out.append(lines[at])
                at += 1
            else:
                out.append(content)
    return "".join(out + lines[at:])


def _file(files: Mapping[str, bytes], path: str) -> str | None:
    """The workspace file a patch path names (the patch may be relative to a subfolder)."""
    match = files.get(path)
    if match is None:
        candidates = [rel for rel in files if rel.endswith("/" + path) or path.endswith("/" + rel)]
        match = files[candidates[0]] if len(candidates) == 1 else None
    return None if match is None else match.decode("utf-8", "replace")


def _same_path(rel: str, path: str) -> bool:
    return rel == path or rel.endswith("/" + path) or path.endswith("/" + rel)


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip().splitlines()]


def patches_to_solution(workspace: Mapping[str, bytes], initial: Path, solved: Path) -> list[str]:
    """Reasons, one per workspace patch that turns an input into the reference solution's output."""
    outputs = changed_files(initial, solved)
    if not outputs:
        return []
    reasons = []
    for rel, data in workspace.items():
        if len(data) > MAX_PATCH_BYTES or b"\n+++ " not in data or b"\n@@ " not in data:
            continue
        for patch in parse(data.decode("utf-8", "replace")):
            original = _file(workspace, patch.path)
            produced = apply(original, patch) if original is not None else None
            if produced is None:
                continue
            done = [out for out, want in outputs.items()
                    if _same_path(out, patch.path) and _lines(produced) == _lines(want.decode("utf-8", "replace"))]
            if done:
                reasons.append(f"workspace/{rel} is a patch that turns {done[0]} into the reference solution's result")
                break
    return reasons
