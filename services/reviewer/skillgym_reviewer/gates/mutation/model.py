"""What a mutant is, and what the verifier made of it.

A mutant is a deliberately wrong version of one output file (or, for the runs, a wrong
trajectory). Its ``effect`` says what kind of change it makes, so declared equivalences and the
alternative solutions can tell which changes are harmless for this task."""

from __future__ import annotations

import hashlib
import random
from dataclasses import asdict, dataclass, field
from typing import Literal

Effect = Literal["value", "type", "order", "shape", "key", "code", "bytes", "run"]
Verdict = Literal["killed", "survived", "equivalent", "not_run", "crashed"]
TrialKind = Literal["output", "partial_solution", "perturbed_input", "llm_solution", "equivalent_rewrite"]

SITES_PER_OPERATOR = 3  # candidate sites drawn per operator and file before the cap spreads them
COVER = "cover"  # the group of a file's mutants that reach each of its regions; tried before the others


@dataclass(frozen=True)
class Mutant:
    """``file`` rewritten to ``content`` by ``operator`` at ``location``."""

    file: str
    operator: str
    location: str
    content: bytes
    effect: Effect
    cover: bool = False  # drawn to reach a region every item may check; judged for items, not scored

    @property
    def name(self) -> str:
        return f"{self.file}:{self.operator}:{self.location}"


@dataclass
class TrialResult:
    """The verifier's verdict on one wrong trajectory. ``failed_items`` are the rubric items
    that scored below 1; ``note`` says why a trial was not counted."""

    name: str
    kind: TrialKind
    verdict: Verdict
    reward: float | None = None
    failed_items: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def counted(self) -> bool:
        return self.verdict in ("killed", "survived")

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        if not self.note:
            data.pop("note")
        return data


def seeded(seed: int, *parts: str) -> random.Random:
    """A generator that depends only on ``seed`` and ``parts``: adding a file or an operator
    never changes the mutants drawn for another."""
    digest = hashlib.sha256("\0".join([str(seed), *parts]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def pick(rng: random.Random, sites: list[object], count: int = SITES_PER_OPERATOR) -> list[int]:
    """Indices of up to ``count`` distinct sites, in a seeded order."""
    order = list(range(len(sites)))
    rng.shuffle(order)
    return order[:count]
