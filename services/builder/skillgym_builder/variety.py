"""The builder's memory of what each family asked of each skill, so that no family gives skills
whose tasks use different tools the same exercise (see
:mod:`skillgym_core.instruction_similarity`): such a task is refused as ``family_same_task`` and
the next fitting family is tried. The memory lives in the store, so every builder process of a
distributed run shares it; two builds racing on one family may both pass, which the run's
summary then lists."""

from __future__ import annotations

import itertools
from typing import Any

from skillgym_core import keys
from skillgym_core.errors import StoreError
from skillgym_core.instruction_similarity import THRESHOLD, Shingles, instruction_shingles, similarity
from skillgym_core.store.base import Store, get_json, put_json

SAME_TASK = "family_same_task"
# the most earlier tasks of one family a new one is compared with (the listing's order)
MAX_COMPARED = 2000


class FamilyInstructions:
    def __init__(self, store: Store) -> None:
        self.store = store
        # records already read (a skill's record changes only when this family builds it again):
        # each build lists the family's records but reads only those it has not seen
        self._seen: dict[str, dict[str, Any]] = {}

    def same_task(self, family_id: str, skill_id: str, tools: frozenset[str], instruction: str) -> dict[str, Any] | None:
        """The earlier task of ``family_id`` whose instruction matches ``instruction`` for another
        skill using other tools, else None."""
        mine = instruction_shingles(instruction)
        for key in itertools.islice(self.store.list(keys.family_instructions(family_id)), MAX_COMPARED):
            seen = self._seen.get(key) or self._read(key)
            if seen is None or seen["skill_id"] == skill_id or frozenset(seen["tools"]) == tools:
                continue
            score = similarity(mine, seen["shingles"])
            if score >= THRESHOLD:
                return {"task_id": seen["task_id"], "skill_id": seen["skill_id"], "similarity": round(score, 3)}
        return None

    def record(self, family_id: str, skill_id: str, task_id: str, tools: frozenset[str], instruction: str) -> None:
        key = keys.family_instruction(family_id, skill_id)
        shingles = instruction_shingles(instruction)
        put_json(self.store, key, {"skill_id": skill_id, "task_id": task_id, "tools": sorted(tools),
                                   "shingles": sorted(shingles)})
        self._seen[key] = {"skill_id": skill_id, "task_id": task_id, "tools": sorted(tools), "shingles": shingles}

    def _read(self, key: str) -> dict[str, Any] | None:
        try:
            data = get_json(self.store, key)
            shingles: Shingles = frozenset(tuple(str(word) for word in item) for item in data["shingles"])
            seen = {"skill_id": str(data["skill_id"]), "task_id": str(data["task_id"]),
                    "tools": [str(t) for t in data["tools"]], "shingles": shingles}
        except (StoreError, KeyError, TypeError, ValueError):
            return None  # a record another version wrote, or one being replaced: not a match
        self._seen[key] = seen
        return seen
