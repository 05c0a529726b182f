"""``skillgym families``: the task families, with the category and subcategories each serves,
its difficulty knobs and the dependency sets its tasks install."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
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


def _new_family(args: argparse.Namespace) -> int:
    from skillgym_builder.families.base import family_ids

    from skillgym.family_scaffold import ScaffoldError, scaffold

    if not args.name:
        console.print("[red]skillgym families new NAME: give the new family's id (lowercase words joined by hyphens)[/red]")
        return 2
    try:
        made = scaffold(args.name, args.dest, shipped=frozenset(family_ids()))
    except ScaffoldError as exc:
        console.print(f"[red]{exc}[/red] ({exc.reason})")
        return 2
    console.print(f"Wrote the {made.family_id} family as a package: {made.root}")
    console.print(f"  pip install -e {made.root}   # registers it under the skillgym.families entry points")
    console.print(f"  skillgym families --example {made.family_id}")
    return 0


def _check_family(args: argparse.Namespace) -> int:
    import tempfile

    from skillgym_builder.families.seeds import seed_skill_dir

    from skillgym.family_check import ConformanceRunner

    if not args.name:
        console.print("[red]skillgym families check ID: give the family's id[/red]")
        return 2
    skills = args.skill or [seed_skill_dir(args.name)]
    with tempfile.TemporaryDirectory(prefix="skillgym-conformance-") as scratch:
        report = ConformanceRunner(args.env_cache, Path(scratch), review=not args.no_review).family(args.name, skills)
    if args.json:
        print(json.dumps(report.record(), indent=2))
    else:
        for skill in report.skills:
            console.print(f"[bold]{args.name}[/bold] on {skill.skill}: {'passed' if skill.passed else '[red]FAILED[/red]'}")
            for check in skill.checks:
                console.print(f"  {'ok ' if check.passed else 'NO '} {check.name}: {check.detail}")
    return 0 if report.passed else 1


def _cmd_families(args: argparse.Namespace) -> int:
    if args.action == "new":
        return _new_family(args)
    if args.action == "check":
        return _check_family(args)
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
    families = sub.add_parser("families", help="list the task families: category, subcategories, knobs, dependencies; "
                                               "'families new NAME' writes a new family as a package of its own, "
                                               "'families check ID' runs the conformance suite on one")
    families.add_argument("action", nargs="?", choices=["new", "check"],
                          help="new: scaffold a family package; check: run the conformance suite on a family")
    families.add_argument("name", nargs="?", help="with new or check: the family's id, such as word-tally")
    families.add_argument("--skill", type=Path, action="append",
                          help="with check: a skill folder to build on (repeatable; default: the family's example skill)")
    families.add_argument("--no-review", action="store_true", help="with check: skip the review and validation")
    families.add_argument("--env-cache", type=Path, default=Path("out/env-cache"),
                          help="with check: where task environments are built (default: out/env-cache)")
    families.add_argument("--dest", type=Path, default=Path("."), help="with new: where its package folder goes (default: .)")
    families.add_argument("--json", action="store_true", help="print JSON instead of a table")
    families.add_argument("--example", metavar="FAMILY", help="show the task FAMILY makes for its example skill")
    families.add_argument("--difficulty", choices=["easy", "medium", "hard"], default="medium",
                          help="knob preset of --example (default: medium)")
    families.set_defaults(func=_cmd_families)
