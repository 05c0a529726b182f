"""Near-identical tasks across skills: a run's built tasks whose instructions say the same thing
for skills whose tasks use different tools of their own (see
:mod:`skillgym_core.instruction_similarity`), listed with both tasks and skills."""

from __future__ import annotations

import io
import itertools
import tarfile
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from skillgym_core import keys
from skillgym_core.contracts.events import EnvBuilt, Envelope
from skillgym_core.errors import StoreError
from skillgym_core.instruction_similarity import THRESHOLD, Shingles, instruction_shingles, similarity, usage_tools
from skillgym_core.store.base import Store

MAX_PAIRS_SHOWN = 20
MAX_INSTRUCTION_BYTES = 256 * 1024


@dataclass(frozen=True)
class BuiltTask:
    task_id: str
    skill_id: str
    family: str
    tools: frozenset[str]  # what of its skill the task uses (see ``usage_tools``)
    shingles: Shingles


def _read_task(store: Store, task_id: str) -> BuiltTask | None:
    """The task's instruction and metadata from its package; None when it cannot be read."""
    try:
        data = store.get_bytes(keys.task_package(task_id))
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            members = {m.name.removeprefix("./"): m for m in archive.getmembers() if m.isfile()}
            instruction = _member(archive, members.get("instruction.md"))
            config = tomllib.loads(_member(archive, members.get("task.toml")))
    except (StoreError, KeyError, FileNotFoundError, tarfile.TarError, OSError, ValueError, EOFError):
        return None
    metadata: dict[str, Any] = config.get("metadata") or {}
    tools = usage_tools(str(metadata.get("skill_name", "")), metadata.get("skill_usage") or {})
    return BuiltTask(task_id, str(metadata.get("skill_id", "")), str(metadata.get("template", "")), tools,
                     instruction_shingles(instruction))


def _member(archive: tarfile.TarFile, member: tarfile.TarInfo | None) -> str:
    if member is None or member.size > MAX_INSTRUCTION_BYTES:
        raise KeyError("missing or too large")
    handle = archive.extractfile(member)
    if handle is None:
        raise KeyError("not a file")
    return handle.read().decode("utf-8", errors="replace")


def near_identical_pairs(tasks: Iterable[BuiltTask], threshold: float = THRESHOLD) -> list[dict[str, Any]]:
    """Pairs of tasks for different skills, using different tools, whose instructions match."""
    found = []
    for a, b in itertools.combinations(sorted(tasks, key=lambda t: t.task_id), 2):
        if a.skill_id == b.skill_id or a.tools == b.tools:
            continue
        score = similarity(a.shingles, b.shingles)
        if score >= threshold:
            found.append({"tasks": [a.task_id, b.task_id], "skills": [a.skill_id, b.skill_id],
                          "families": sorted({a.family, b.family}), "similarity": round(score, 3)})
    return sorted(found, key=lambda pair: -pair["similarity"])


def instruction_variety(store: Store, events: Iterable[Envelope]) -> dict[str, Any]:
    """The run's near-identical instructions across skills (see the module docstring)."""
    task_ids = sorted({e.payload.task_id for e in events if isinstance(e.payload, EnvBuilt)})
    tasks = [task for task_id in task_ids if (task := _read_task(store, task_id)) is not None]
    pairs = near_identical_pairs(tasks)
    return {"threshold": THRESHOLD, "tasks_compared": len(tasks), "near_identical_pairs": len(pairs),
            "skills_involved": len({skill for pair in pairs for skill in pair["skills"]}),
            "pairs": pairs[:MAX_PAIRS_SHOWN]}
