"""``skillgym families``: the task families, with the category and subcategories each serves,
its difficulty knobs and the dependency sets its tasks install. Also gives ``skillgym run`` its
``--builder-llm-model`` option (the model name sent to the builder endpoint)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from rich.table import Table

from skillgym.console import console

BUILDER_MODEL_ENV = "SKILLGYM_BUILDER_LLM_MODEL"


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


def _cmd_families(args: argparse.Namespace) -> int:
    families = describe()
    if args.json:
        print(json.dumps(families, indent=2))
        return 0
    table = Table(title="Task families")
    table.add_column("family", no_wrap=True)
    for column in ("category", "subcategories", "knobs (levels)", "python", "binaries"):
        table.add_column(column)
    for family in families:
        deps = family["dependencies"]
        knobs = ", ".join(f"{k['name']} {'/'.join(f'{v:g}' for v in k['levels'])}" for k in family["knobs"])
        binaries = ", ".join(deps["binaries"] + [f"({b})" for b in deps["optional_binaries"]])
        python = ", ".join(deps["python"]) or "standard library"
        table.add_row(family["id"], family["category"], ", ".join(family["subcategories"]), knobs, python, binaries)
    console.print(table)
    return 0


def with_builder_model(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` with ``--builder-llm-model`` in effect: the builder reads it from its settings."""

    def wrapped(args: argparse.Namespace) -> int:
        from skillgym.wiring import environment

        with environment({BUILDER_MODEL_ENV: args.builder_llm_model} if args.builder_llm_model else {}):
            return run(args)

    return wrapped


def _add_builder_model_option(sub: Any) -> None:
    run = sub.choices.get("run")
    if run is None:
        return
    run.add_argument("--builder-llm-model", help="model name sent to --builder-llm-base-url (default: the "
                                                 f"{BUILDER_MODEL_ENV} setting, else 'default')")
    run.set_defaults(func=with_builder_model(run.get_default("func")))


def register(sub: Any) -> None:
    families = sub.add_parser("families", help="list the task families: category, subcategories, knobs, dependencies")
    families.add_argument("--json", action="store_true", help="print JSON instead of a table")
    families.set_defaults(func=_cmd_families)
    _add_builder_model_option(sub)
