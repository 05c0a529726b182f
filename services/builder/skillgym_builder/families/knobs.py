"""Difficulty knobs: a family's knobs start at their easiest level, difficulty presets raise
several at once, and hardening raises one more step per revision, recording which changed."""

from __future__ import annotations

import random
from dataclasses import dataclass

from skillgym_builder.errors import BuildError
from skillgym_builder.families.base import FamilySpec

DIFFICULTY_STEPS = {"easy": 0, "medium": 1, "hard": 2}
# which knob hardening raises first: more of the same work, then the kinds of trouble
HARDENING_ORDER = ("record_count", "multi_step", "error_recovery", "noise_level", "distractor_files", "long_horizon")


class UnknownKnobError(BuildError):
    reason = "unknown_knob"


@dataclass(frozen=True)
class KnobChange:
    name: str
    before: float
    after: float

    def to_dict(self) -> dict[str, object]:
        return {"knob": self.name, "from": self.before, "to": self.after}


def level_of(spec: FamilySpec, name: str, value: float) -> int:
    knob = spec.knob(name)
    if knob is None:
        raise UnknownKnobError(f"family {spec.id} has no knob {name!r}", family=spec.id, knob=name)
    return max((i for i, level in enumerate(knob.levels) if level <= value), default=0)


def defaults(spec: FamilySpec) -> dict[str, float]:
    return {knob.name: knob.levels[0] for knob in spec.knobs}


def preset(spec: FamilySpec, difficulty: str, rng: random.Random) -> dict[str, float]:
    """Knob values for a named difficulty: ``medium`` raises one knob a step, ``hard`` two knobs
    two steps (which ones depends on ``rng``, so a corpus covers every knob)."""
    values = defaults(spec)
    steps = DIFFICULTY_STEPS.get(difficulty, 0)
    raisable = [k for k in spec.knobs if len(k.levels) > 1]
    rng.shuffle(raisable)
    for knob in raisable[:steps]:
        values[knob.name] = knob.levels[min(steps, len(knob.levels) - 1)]
    return values


def validate(spec: FamilySpec, values: dict[str, float]) -> dict[str, float]:
    """``values`` completed with defaults; unknown names are an error."""
    unknown = sorted(set(values) - {k.name for k in spec.knobs})
    if unknown:
        raise UnknownKnobError(f"family {spec.id} has no knobs {unknown}", family=spec.id, knobs=unknown)
    return {**defaults(spec), **values}


def harden(spec: FamilySpec, values: dict[str, float]) -> tuple[dict[str, float], list[KnobChange]]:
    """The next harder knob setting: the first knob in :data:`HARDENING_ORDER` below its top
    level goes one level up. No change when every knob is at its top."""
    current = validate(spec, values)
    for name in sorted((k.name for k in spec.knobs), key=HARDENING_ORDER.index):
        knob = spec.knob(name)
        assert knob is not None
        step = level_of(spec, name, current[name])
        if step + 1 < len(knob.levels):
            raised = {**current, name: knob.levels[step + 1]}
            return raised, [KnobChange(name, current[name], knob.levels[step + 1])]
    return current, []


def difficulty_label(spec: FamilySpec, values: dict[str, float]) -> str:
    raised = sum(level_of(spec, k.name, values.get(k.name, k.levels[0])) for k in spec.knobs)
    return "easy" if raised == 0 else "medium" if raised <= 2 else "hard"


def patterns(spec: FamilySpec, values: dict[str, float]) -> list[str]:
    """The difficulty patterns the raised knobs realise (for the blueprint and the metadata)."""
    return [k.pattern for k in spec.knobs if level_of(spec, k.name, values.get(k.name, k.levels[0])) > 0]
