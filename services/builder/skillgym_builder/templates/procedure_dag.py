"""Partial-order template: a per-task sampled DAG over lines of the skill, plus the implicit
order the skill itself imposes inside each section."""

from __future__ import annotations

import random

from skillgym_builder.blueprint import Blueprint
from skillgym_builder.skillcard import Line, SkillCard
from skillgym_builder.templates.base import TemplateOutput, load_spec, verifier_files
from skillgym_builder.templates.common import jsonl, pick_lines, solution_files

TEMPLATE_ID = "procedure-dag"
MIN_ITEMS = 5


class ProcedureDagTemplate:
    supported_knobs: tuple[str, ...] = ("more_items", "dense_dependencies")

    def __init__(self) -> None:
        self.spec = load_spec(TEMPLATE_ID)

    def unsuitable_reason(self, card: SkillCard) -> str | None:
        lines = card.quotable_lines()
        sections: dict[str, int] = {}
        for line in lines:
            sections[line.section] = sections.get(line.section, 0) + 1
        if len(lines) < MIN_ITEMS or not any(n >= 2 for n in sections.values()):
            return (
                f"{TEMPLATE_ID} needs at least {MIN_ITEMS} quotable lines and a section with two of them; "
                f"SKILL.md has {len(lines)} lines in {len(sections)} sections"
            )
        return None

    def generate(self, card: SkillCard, rng: random.Random, blueprint: Blueprint) -> TemplateOutput:
        knobs = set(blueprint.patterns)
        count = 10 if "more_items" in knobs else 7
        picked = pick_lines(card, rng, count)
        ids = {f"s{index + 1}": line for index, line in enumerate(picked)}
        implicit = _skill_order_edges(ids)
        order = _random_linear_extension(list(ids), implicit, rng)
        probability = 0.45 if "dense_dependencies" in knobs else 0.25
        explicit = {
            (order[i], order[j])
            for i in range(len(order))
            for j in range(i + 1, len(order))
            if rng.random() < probability and (order[i], order[j]) not in implicit
        }
        edges = sorted(explicit | implicit)
        expected = {"items": sorted(ids), "edges": [list(e) for e in edges], "stages": _stages(order, edges)}
        deps = "".join(f"{a} -> {b}\n" for a, b in sorted(explicit, key=lambda e: (int(e[0][1:]), int(e[1][1:]))))
        return TemplateOutput(
            instruction=_instruction(card, len(ids)),
            workspace={
                "items.jsonl": jsonl({"id": i, "text": line.text} for i, line in ids.items()),
                "deps.txt": deps.encode(),
            },
            protected=["items.jsonl", "deps.txt"],
            tests=verifier_files(TEMPLATE_ID, expected, self.spec.rubric),
            solution_steps=["python3 /solution/plan.py", "python3 /solution/stages.py"],
            solution_files=solution_files(TEMPLATE_ID, ("plan.py", "stages.py")),
            alternatives={"reverse-tie-break": ["python3 /solution/plan.py --reverse", "python3 /solution/stages.py"]},
            blueprint=blueprint,
            params={"items": len(ids), "explicit_edges": len(explicit), "implicit_edges": len(implicit)},
        )


def _skill_order_edges(ids: dict[str, Line]) -> set[tuple[str, str]]:
    by_section: dict[str, list[tuple[int, str]]] = {}
    for item_id, line in ids.items():
        by_section.setdefault(line.section, []).append((line.number, item_id))
    edges: set[tuple[str, str]] = set()
    for members in by_section.values():
        members.sort()
        edges.update((members[i][1], members[i + 1][1]) for i in range(len(members) - 1))
    return edges


def _random_linear_extension(nodes: list[str], edges: set[tuple[str, str]], rng: random.Random) -> list[str]:
    indegree = {n: 0 for n in nodes}
    for _, b in edges:
        indegree[b] += 1
    ready = sorted(n for n, d in indegree.items() if d == 0)
    order = []
    while ready:
        node = ready.pop(rng.randrange(len(ready)))
        order.append(node)
        for a, b in sorted(edges):
            if a == node:
                indegree[b] -= 1
                if indegree[b] == 0:
                    ready.append(b)
    return order


def _stages(order: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    stage = {n: 0 for n in order}
    for node in order:
        for a, b in edges:
            if a == node:
                stage[b] = max(stage[b], stage[a] + 1)
    return stage


def _instruction(card: SkillCard, count: int) -> str:
    return f"""# Plan the `{card.name}` work items

`/app/items.jsonl` holds {count} work items, one JSON object `{{"id": ..., "text": ...}}` per line.
Every item's text is a line of guidance taken from the `{card.name}` skill (installed in your skills
directory as `{card.dir_name}/SKILL.md`), with list markers and emphasis removed.

Two kinds of dependency constrain the order in which the items may be done:

- the explicit ones in `/app/deps.txt`, one `A -> B` per line (A must come before B);
- items quoted from the same section of the skill must be done in the order the skill lists them.
  These are not written down anywhere else.

1. Write `/app/plan.txt`: every item id exactly once, one per line, in an order that respects
   both kinds of dependency.
2. Write `/app/stages.json`: a JSON object mapping each item id to its stage, the number of
   items on the longest chain of dependencies (of either kind) that must precede it
   (items with no prerequisites are stage 0).

Do not modify `/app/items.jsonl` or `/app/deps.txt`.
"""
