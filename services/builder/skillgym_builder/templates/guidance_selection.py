"""Constraint-satisfaction template: pick skill guidance under budget, size, coverage and cap
constraints that pull against each other."""

from __future__ import annotations

import itertools
import json
import random

from skillgym_builder.blueprint import Blueprint
from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.skillcard import Line, SkillCard
from skillgym_builder.templates.base import TemplateOutput, load_spec, verifier_files
from skillgym_builder.templates.common import jsonl, pick_lines, solution_files

TEMPLATE_ID = "guidance-selection"
MIN_SECTIONS = 3
MAX_TRIES = 60


class GuidanceSelectionTemplate:
    supported_knobs: tuple[str, ...] = ("tight_budget", "more_items")

    def __init__(self) -> None:
        self.spec = load_spec(TEMPLATE_ID)

    def unsuitable_reason(self, card: SkillCard) -> str | None:
        lines = card.quotable_lines()
        sections = {line.section for line in lines}
        if len(sections) < MIN_SECTIONS or len(lines) < 6:
            return f"{TEMPLATE_ID} needs 6 quotable lines over {MIN_SECTIONS} sections; SKILL.md has {len(lines)} over {len(sections)}"
        return None

    def generate(self, card: SkillCard, rng: random.Random, blueprint: Blueprint) -> TemplateOutput:
        knobs = set(blueprint.patterns)
        for _ in range(MAX_TRIES):
            picked = pick_lines(card, rng, 10 if "more_items" in knobs else 8)
            ids = {f"c{index + 1}": line for index, line in enumerate(picked)}
            minutes = {i: rng.randrange(5, 45, 5) for i in ids}
            rules = _constraints(ids, minutes, rng, tight="tight_budget" in knobs)
            if rules is not None:
                break
        else:
            raise UnsuitableSkillError(f"{TEMPLATE_ID}: no constraint set with a narrow solution space", skill=card.name)
        expected = {
            "minutes": minutes,
            "sections": {i: line.section for i, line in ids.items()},
            "constraints": rules,
        }
        return TemplateOutput(
            instruction=_instruction(card, len(ids)),
            workspace={
                "candidates.jsonl": jsonl({"id": i, "text": line.text, "minutes": minutes[i]} for i, line in ids.items()),
                "constraints.json": (json.dumps(rules, indent=2) + "\n").encode(),
            },
            protected=["candidates.jsonl", "constraints.json"],
            tests=verifier_files(TEMPLATE_ID, expected, self.spec.rubric),
            solution_steps=["python3 /solution/select.py"],
            solution_files=solution_files(TEMPLATE_ID, ("select.py",)),
            alternatives={"largest-feasible-set": ["python3 /solution/select.py --largest"]},
            blueprint=blueprint,
            equivalences={"selection.json": ["reorder_lists"]},  # a selection is a set
            params={"candidates": len(ids), **rules},
        )


def _feasible(ids: dict[str, Line], minutes: dict[str, int], rules: dict) -> list[tuple[str, ...]]:
    out = []
    for n in range(1, len(ids) + 1):
        for subset in itertools.combinations(sorted(ids), n):
            sections = [ids[i].section for i in subset]
            if (
                sum(minutes[i] for i in subset) <= rules["budget_minutes"]
                and n >= rules["min_items"]
                and all(s in sections for s in rules["cover_sections"])
                and sections.count(rules["cap_section"]) <= rules["cap_count"]
            ):
                out.append(subset)
    return out


def _constraints(ids: dict[str, Line], minutes: dict[str, int], rng: random.Random, *, tight: bool) -> dict | None:
    sections = sorted({line.section for line in ids.values()})
    counts = {s: sum(1 for line in ids.values() if line.section == s) for s in sections}
    cap_choices = [s for s in sections if counts[s] >= 2]
    if len(sections) < 3 or not cap_choices:
        return None
    cap_section = rng.choice(cap_choices)
    cover = rng.sample([s for s in sections if s != cap_section], 2)
    # a hidden target selection shows the rules can be met; the budget is set just above it
    target = [rng.choice([i for i, line in ids.items() if line.section == s]) for s in cover]
    extra = [i for i in ids if i not in target and ids[i].section != cap_section]
    rng.shuffle(extra)
    target += extra[:2]
    target.append(rng.choice([i for i, line in ids.items() if line.section == cap_section]))
    slack = 0 if tight else 10
    rules = {
        "budget_minutes": sum(minutes[i] for i in target) + slack,
        "min_items": len(target),
        "cover_sections": cover,
        "cap_section": cap_section,
        "cap_count": 1,
    }
    feasible = _feasible(ids, minutes, rules)
    total = 2 ** len(ids) - 1
    # solvable, yet rare enough that guessing or ignoring a constraint fails
    if not feasible or len(feasible) * 8 > total:
        return None
    return rules


def _instruction(card: SkillCard, count: int) -> str:
    return f"""# Pick the `{card.name}` actions that fit

`/app/candidates.jsonl` lists {count} candidate actions, one JSON object per line with an `id`,
the action's `text` (a line of guidance from the `{card.name}` skill, installed in your skills
directory as `{card.dir_name}/SKILL.md`, with markup removed) and the `minutes` it takes.

`/app/constraints.json` states what a valid selection must satisfy, all at once:

- `budget_minutes`: the selected minutes add up to at most this;
- `min_items`: at least this many actions are selected;
- `cover_sections`: for each heading listed, at least one selected action comes from that
  section of the skill's `SKILL.md`;
- `cap_section` / `cap_count`: at most `cap_count` selected actions come from that section.

The candidate list does not say which section an action comes from: the skill does.

Write `/app/selection.json` as `{{"selected": [ids...], "total_minutes": <sum of their minutes>}}`.
Any selection that satisfies every constraint is accepted. Do not modify the input files.
"""
