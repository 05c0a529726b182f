"""The difficulty-pattern pool (Skill2Env): challenges grouped by capability demand, stored as
data. A pattern with a ``knob`` changes how a template generates; the others shape the LLM
builder's blueprint. Hardening may add new patterns to the stored pool: one object per pattern,
written once, so builders adding patterns at the same time (threads or replicas) never
overwrite each other's."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict
from skillgym_core.store.base import Store, get_json, put_json

from skillgym_builder.templates.base import data_text

Demand = Literal[
    "environment-understanding", "planning", "skill-use", "long-horizon-consistency", "error-recovery"
]
DEMANDS: tuple[str, ...] = Demand.__args__  # type: ignore[attr-defined]
LEGACY_POOL_KEY = "builder/patterns.json"  # the whole added pool as one list, as first stored
PATTERNS_PREFIX = "builder/patterns/"
_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class Pattern(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    demand: Demand
    name: str
    description: str
    knob: str | None = None


class PatternPool:
    def __init__(self, patterns: Iterable[Pattern]) -> None:
        self.patterns = {p.id: p for p in patterns}

    @classmethod
    def builtin(cls) -> PatternPool:
        return cls(Pattern.model_validate(p) for p in json.loads(data_text("patterns.json"))["patterns"])

    @classmethod
    def load(cls, store: Store) -> PatternPool:
        """The built-in pool plus every pattern hardening added (kept in the store)."""
        pool = cls.builtin()
        stored = get_json(store, LEGACY_POOL_KEY) if store.exists(LEGACY_POOL_KEY) else []
        stored += [get_json(store, key) for key in store.list(PATTERNS_PREFIX) if key.endswith(".json")]
        for raw in stored:
            pattern = Pattern.model_validate(raw)
            pool.patterns.setdefault(pattern.id, pattern)
        return pool

    def add(self, store: Store, pattern: Pattern) -> bool:
        if pattern.id in self.patterns:
            return False
        self.patterns[pattern.id] = pattern
        put_json(store, pattern_key(pattern.id), pattern.model_dump())
        return True

    def compatible(self, knobs: Iterable[str], *, prompt_only: bool) -> list[Pattern]:
        supported = set(knobs)
        return [p for p in self.patterns.values() if (p.knob in supported) or (prompt_only and p.knob is None)]

    def choose(self, rng: random.Random, knobs: Iterable[str], count: int, *, prompt_only: bool = False,
               exclude: Iterable[str] = ()) -> list[Pattern]:
        """Up to ``count`` compatible patterns from distinct capability demands."""
        skip = set(exclude)
        options = [p for p in self.compatible(knobs, prompt_only=prompt_only) if p.id not in skip]
        rng.shuffle(options)
        chosen: list[Pattern] = []
        for pattern in options:
            if len(chosen) >= count:
                break
            if all(p.demand != pattern.demand for p in chosen):
                chosen.append(pattern)
        return chosen


def pattern_key(pattern_id: str) -> str:
    """Where an added pattern is stored: its id when that is a safe file name, else its hash."""
    name = pattern_id if _SAFE_ID.fullmatch(pattern_id) else hashlib.sha256(pattern_id.encode()).hexdigest()[:24]
    return f"{PATTERNS_PREFIX}{name}.json"

