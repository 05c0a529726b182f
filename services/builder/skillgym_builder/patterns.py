"""The difficulty-pattern pool (Skill2Env): challenges grouped by capability demand, stored as
data. A pattern with a ``knob`` changes how a template generates; the others shape the LLM
builder's blueprint. Hardening may add new patterns to the stored pool."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict
from skillgym_core.store.base import Store, get_json, put_json

from skillgym_builder.templates.base import data_text

Demand = Literal[
    "environment-understanding", "planning", "skill-use", "long-horizon-consistency", "error-recovery"
]
DEMANDS: tuple[str, ...] = Demand.__args__  # type: ignore[attr-defined]
POOL_KEY = "builder/patterns.json"


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
        if store.exists(POOL_KEY):
            for raw in get_json(store, POOL_KEY):
                pattern = Pattern.model_validate(raw)
                pool.patterns.setdefault(pattern.id, pattern)
        return pool

    def add(self, store: Store, pattern: Pattern) -> bool:
        if pattern.id in self.patterns:
            return False
        self.patterns[pattern.id] = pattern
        added = get_json(store, POOL_KEY) if store.exists(POOL_KEY) else []
        put_json(store, POOL_KEY, [*added, pattern.model_dump()])
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
