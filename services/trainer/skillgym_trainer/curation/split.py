"""Train/eval split by skill: every run of a skill lands on the same side."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from skillgym_core.ids import sha256_hex

from skillgym_trainer.curation.records import Candidate


def split_by_skill(
    candidates: Sequence[Candidate], eval_fraction: float, seed: int = 0
) -> tuple[list[Candidate], list[Candidate]]:
    """Assign whole skills to eval (in seeded-hash order) until about ``eval_fraction`` of the
    examples are there; at least one skill stays in train."""
    if eval_fraction <= 0:
        return list(candidates), []
    by_skill: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_skill[candidate.skill_id].append(candidate)
    skills = sorted(by_skill, key=lambda s: sha256_hex(f"{seed}:{s}".encode()))
    target = eval_fraction * len(candidates)
    eval_skills: set[str] = set()
    taken = 0
    for skill in skills[:-1]:
        if taken >= target:
            break
        if taken + len(by_skill[skill]) > target * 1.5 and taken > 0:
            continue
        eval_skills.add(skill)
        taken += len(by_skill[skill])
    train = [c for c in candidates if c.skill_id not in eval_skills]
    evaluation = [c for c in candidates if c.skill_id in eval_skills]
    return train, evaluation
