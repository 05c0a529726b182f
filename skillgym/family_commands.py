"""``skillgym families``: the task families, with the category and subcategories each serves,
its difficulty knobs and the dependency sets its tasks install."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from skillgym.console import console


def describe() -> list[dict[str, Any]]:
    from skillgym_builder.families import registry

    out = []
    for family in registry().all():
        spec = family.spec
        out.append({
            "id": spec.id,
            "title": spec.title,
            "category": spec.category,
            "subcategories": spec.subcategories,
            "profile": spec.profile,
            "knobs": [knob.model_dump() for knob in spec.knobs],
            "dependencies": spec.dependencies.model_dump(),
            "outputs": spec.outputs,
            "rubric": [item.name for item in spec.rubric],
        })
    return out


def example(family_id: str, difficulty: str = "medium") -> dict[str, Any]:
    """The task a family makes for its own example skill: the instruction, the rubric (what the
    checker recomputes) and the skill claim. Inputs that need rendering are not rendered."""
    import random

    from skillgym_builder.families import knobs as knob_rules
    from skillgym_builder.families import registry
    from skillgym_builder.families.base import RenderedFamily
    from skillgym_builder.families.seeds import seed_card

    family = registry().get(family_id)
    knobs = knob_rules.preset(family.spec, difficulty, random.Random(0))
    output = family.instantiate(seed_card(family.spec), 0, knobs)
    return {
        "id": family_id,
        "category": family.spec.category,
        "knobs": knobs,
        "instruction": output.instruction,
        "inputs": sorted([*output.workspace, *(p for job in output.render_jobs for p in job.produces
                                               if not isinstance(family, RenderedFamily))]),
        # a family finished after rendering (its rubric depends on the skill script's results) shows its full rubric
        "rubric": (json.loads(output.tests["rubric.json"]) if "rubric.json" in output.tests
                   else [item.model_dump() for item in family.spec.rubric]),
        "skill_claim": output.metadata.get("skill_claim"),
    }


def _show_example(args: argparse.Namespace) -> int:
    shown = example(args.example, args.difficulty)
    if args.json:
        print(json.dumps(shown, indent=2))
        return 0
    console.print(f"[bold]{shown['id']}[/bold] ({shown['category']}), knobs {shown['knobs']}")
    print(shown["instruction"])
    print(f"inputs: {', '.join(shown['inputs'])}")
    print("checker (weight, rubric item):")
    for item in shown["rubric"]:
        print(f"  {item['weight']:.2f}  {item['name']}: {item['description']}")
    return 0


def _cmd_families(args: argparse.Namespace) -> int:
    if args.example:
        return _show_example(args)
    families = describe()
    if args.json:
        print(json.dumps(families, indent=2))
        return 0
    table = Table(title="Task families")
    table.add_column("family", no_wrap=True)
    for column in ("category", "subcategories", "knobs (levels)", "python", "binaries", "browser"):
        table.add_column(column)
    for family in families:
        deps = family["dependencies"]
        knobs = ", ".join(f"{k['name']} {'/'.join(f'{v:g}' for v in k['levels'])}" for k in family["knobs"])
        binaries = ", ".join(deps["binaries"] + [f"({b})" for b in deps["optional_binaries"]])
        python = ", ".join(deps["python"]) or "standard library"
        table.add_row(family["id"], family["category"], ", ".join(family["subcategories"]), knobs, python, binaries,
                      ", ".join(deps.get("web", [])))
    console.print(table)
    return 0


def register(sub: Any) -> None:
    families = sub.add_parser("families", help="list the task families: category, subcategories, knobs, dependencies")
    families.add_argument("--json", action="store_true", help="print JSON instead of a table")
    families.add_argument("--example", metavar="FAMILY", help="show the task FAMILY makes for its example skill")
    families.add_argument("--difficulty", choices=["easy", "medium", "hard"], default="medium",
                          help="knob preset of --example (default: medium)")
    families.set_defaults(func=_cmd_families)
