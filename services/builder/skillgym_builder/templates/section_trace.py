"""Procedural template: locate shuffled quotes in the skill, then summarise and order them."""

from __future__ import annotations

import json
import random

from skillgym_builder.blueprint import Blueprint
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput, data_text, load_spec, verifier_files
from skillgym_builder.templates.common import pick_lines

MIN_QUOTES = 4
MAX_QUOTES = 8
MIN_SECTIONS = 2


class SectionTraceTemplate:
    supported_knobs: tuple[str, ...] = ("more_items",)

    def __init__(self) -> None:
        self.spec = load_spec("section-trace")

    def unsuitable_reason(self, card: SkillCard) -> str | None:
        lines = card.quotable_lines()
        sections = {line.section for line in lines}
        if len(lines) < MIN_QUOTES or len(sections) < MIN_SECTIONS:
            return (
                f"SKILL.md has {len(lines)} quotable lines in {len(sections)} sections; "
                f"section-trace needs at least {MIN_QUOTES} lines in {MIN_SECTIONS} sections"
            )
        return None

    def generate(self, card: SkillCard, rng: random.Random, blueprint: Blueprint) -> TemplateOutput:
        picked = pick_lines(card, rng, MAX_QUOTES + (4 if "more_items" in blueprint.patterns else 0))
        queries = {f"q{index + 1}": line for index, line in enumerate(picked)}
        workspace_text = "".join(json.dumps({"id": qid, "text": line.text}) + "\n" for qid, line in queries.items())
        expected = {
            "skill": card.name,
            "queries": {qid: {"section": line.section, "line": line.number} for qid, line in queries.items()},
        }
        instruction = _instruction(card, len(queries))
        solution_files = {
            name: data_text("templates", "section-trace", "solution", name).encode()
            for name in ("locate.py", "summarize.py", "order.py")
        }
        return TemplateOutput(
            instruction=instruction,
            workspace={"queries.jsonl": workspace_text.encode()},
            protected=["queries.jsonl"],
            tests=verifier_files("section-trace", expected, self.spec.rubric),
            solution_steps=[
                "python3 /solution/locate.py",
                "python3 /solution/summarize.py",
                "python3 /solution/order.py",
            ],
            solution_files=solution_files,
            alternatives={
                "compact-json-and-casefolded-headings": [
                    "python3 /solution/locate.py",
                    "python3 /solution/summarize.py",
                    "python3 /solution/order.py",
                    "python3 -c \"import json;p='out/locations.json';d=json.load(open(p));"
                    "json.dump({k:v.upper() for k,v in d.items()},open(p,'w'),separators=(',',':'))\"",
                ]
            },
            blueprint=blueprint,
            params={"quotes": len(queries), "sections": len({line.section for line in picked})},
        )


def _instruction(card: SkillCard, count: int) -> str:
    return f"""# Trace guidance back to the `{card.name}` skill

A reviewer pulled {count} lines of guidance out of the `{card.name}` skill and shuffled them.
Each line of `/app/queries.jsonl` is a JSON object `{{"id": ..., "text": ...}}` holding one of those
lines, with list markers and emphasis markup removed. The skill itself is installed in your skills
directory (look for `{card.dir_name}/SKILL.md`).

Do the following, in order; each step builds on the output of the previous one:

1. For every query, find the section of the skill's `SKILL.md` the line belongs to: the nearest
   Markdown heading above it, written without the leading `#` characters. Write
   `/app/out/locations.json`, a JSON object mapping each query id to that heading.
2. From your `locations.json`, write `/app/out/summary.json`: a JSON object mapping each heading
   that occurs in it to the number of queries it holds.
3. Write `/app/out/order.txt`: the query ids, one per line, in the order their lines appear in
   `SKILL.md` from top to bottom.

Do not modify `/app/queries.jsonl`.
"""
