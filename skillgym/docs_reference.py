"""The docs site's reference pages, generated from the code so they cannot drift: every CLI
command and option (from the argument parsers), every setting with its default (from the
pydantic Settings), the family catalog with an example task each (from the registry), the event
topics and payloads (from the AsyncAPI document), the Helm chart's values (from its schema),
the Prometheus metrics (from the collector registry), and the measured results (from
``benchmarks/results/*.json``).

    python -m skillgym.docs_reference docs/reference
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
ASYNCAPI = ROOT / "shared" / "skillgym_core" / "contracts" / "schemas" / "v1" / "asyncapi.yaml"
CHART_SCHEMA = ROOT / "charts" / "skillgym" / "values.schema.json"
RESULTS = ROOT / "benchmarks" / "results"
SETTINGS = ("skillgym_core.settings:CommonSettings", "skillgym_ingest.settings:IngestSettings",
            "skillgym_builder.settings:BuilderSettings", "skillgym_reviewer.settings:ReviewerSettings",
            "skillgym_validator.settings:ValidatorSettings", "skillgym_sampler.settings:SamplerSettings",
            "skillgym_trainer.settings:TrainerSettings", "skillgym_envserver.settings:EnvServerSettings",
            "skillgym_core.sandbox.kubernetes:KubernetesSandboxSettings", "skillgym.serve:ServeSettings",
            "skillgym_operator.settings:OperatorSettings")
METRIC_MODULES = ("skillgym_core.metrics", "skillgym_reviewer.metrics", "skillgym_trainer.service",
                  "skillgym_trainer.serve", "skillgym_validator.validation", "skillgym_ingest.annotate.basic",
                  "skillgym_trainer.curation.hidden", "skillgym_trainer.curation.card", "skillgym_core.service")


def _cell(text: Any) -> str:
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


# -- commands ---------------------------------------------------------------------------------

def commands(parser: argparse.ArgumentParser | None = None, prefix: str = "skillgym") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command path with its parser, the top level first."""
    if parser is None:
        from skillgym.cli import build_parser

        parser = build_parser()
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, f"{prefix} {name}")


def options(parser: argparse.ArgumentParser) -> list[tuple[str, str, str]]:
    """(how it is written, default, help) of each argument but -h."""
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        written = ", ".join(action.option_strings) or action.dest
        default = "" if action.default in (None, argparse.SUPPRESS, False) else repr(action.default)
        rows.append((written, default, action.help or ""))
    return rows


def commands_page() -> str:
    lines = ["# Commands", "", "Generated from `skillgym`'s argument parsers.", ""]
    for path, parser in commands():
        lines += [f"## `{path}`", "", _cell(parser.description or "").strip() or "", ""]
        rows = options(parser)
        if rows:
            lines += ["| argument | default | meaning |", "| --- | --- | --- |"]
            lines += [f"| `{w}` | {_cell(d)} | {_cell(h)} |" for w, d, h in rows]
            lines.append("")
    return "\n".join(lines) + "\n"


# -- settings ---------------------------------------------------------------------------------

def settings_classes() -> list[Any]:
    if str(ROOT / "operator") not in sys.path:  # the operator is run from its folder, not installed
        sys.path.insert(0, str(ROOT / "operator"))
    found = []
    for spec in SETTINGS:
        module, _, name = spec.partition(":")
        found.append(getattr(importlib.import_module(module), name))
    return found


def settings_page() -> str:
    lines = ["# Settings", "", "Generated from each service's pydantic `Settings`. Every setting is read from the",
             "environment (`SKILLGYM_<NAME>`, or the alias shown); secrets are `SecretStr` and never printed.", ""]
    for cls in settings_classes():
        prefix = cls.model_config.get("env_prefix", "")
        base = "" if cls.__name__ == "CommonSettings" else f" (also every setting of {cls.__mro__[1].__name__})"
        lines += [f"## {cls.__name__}", "", _cell((cls.__doc__ or "").strip()) + base, "",
                  "| setting | environment | default | meaning |", "| --- | --- | --- | --- |"]
        inherited = set() if cls.__name__ == "CommonSettings" else set(getattr(cls.__mro__[1], "model_fields", {}))
        for name, field in cls.model_fields.items():
            if name in inherited:
                continue
            env = field.alias or f"{prefix}{name}".upper()
            default = "" if field.is_required() else repr(field.get_default(call_default_factory=False))
            lines.append(f"| `{name}` | `{env.upper()}` | {_cell(default)} | {_cell(field.description)} |")
        lines.append("")
    return "\n".join(lines) + "\n"


# -- families ---------------------------------------------------------------------------------

def families_page() -> str:
    from skillgym_builder.families import registry

    from skillgym.family_commands import example

    lines = ["# Task families", "", "Generated from the family registry: each family's spec and the task it makes",
             "for its own example skill at medium difficulty (`skillgym families --example ID`).", ""]
    for family in registry().all():
        spec = family.spec
        shown = example(spec.id)
        lines += [f"## `{spec.id}`", "", f"**{spec.title}** ({spec.category}; serves: "
                  f"{', '.join(spec.subcategories) or 'any subcategory its evidence fits'})", "", spec.description, "",
                  "| knob | levels | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{k.name}` | {' / '.join(f'{v:g}' for v in k.levels)} | {_cell(k.description)} |" for k in spec.knobs]
        lines += ["", "| rubric item | weight | checks |", "| --- | --- | --- |"]
        lines += [f"| `{r['name']}` | {r['weight']:.2f} | {_cell(r['description'])} |" for r in shown["rubric"]]
        lines += ["", "Example instruction:", "", "```markdown", shown["instruction"].strip().replace("```", "'''"),
                  "```", ""]
    return "\n".join(lines) + "\n"


# -- events -----------------------------------------------------------------------------------

def events_page() -> str:
    document = yaml.safe_load(ASYNCAPI.read_text())
    lines = ["# Event topics", "", f"Generated from the AsyncAPI document (`{ASYNCAPI.relative_to(ROOT)}`, "
             f"version {document['info']['version']}).", "", "| topic | carries |", "| --- | --- |"]
    for channel in document["channels"].values():
        lines.append(f"| `{channel['address']}` | {_cell(channel.get('description'))} |")
    lines += ["", "## Payloads", ""]
    for name, schema in document["components"].get("schemas", {}).items():
        lines += [f"### {name}", "", _cell(schema.get("description")), ""]
        props = schema.get("properties") or {}
        if props:
            required = set(schema.get("required") or [])
            lines += ["| field | type | required | meaning |", "| --- | --- | --- | --- |"]
            lines += [f"| `{p}` | {_cell(v.get('type') or v.get('$ref', '').rsplit('/', 1)[-1] or 'any')} | "
                      f"{'yes' if p in required else ''} | {_cell(v.get('description'))} |" for p, v in props.items()]
            lines.append("")
    return "\n".join(lines) + "\n"


# -- chart values -----------------------------------------------------------------------------

def chart_values(schema: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for name, value in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield path, value
        yield from chart_values(value, path)


def chart_page() -> str:
    schema = json.loads(CHART_SCHEMA.read_text())
    lines = ["# Helm chart values", "", f"Generated from `{CHART_SCHEMA.relative_to(ROOT)}`.", "",
             "| value | type | default | meaning |", "| --- | --- | --- | --- |"]
    for path, value in chart_values(schema):
        kind = value.get("type", "")
        kind = "/".join(kind) if isinstance(kind, list) else kind
        default = json.dumps(value["default"]) if "default" in value else ""
        lines.append(f"| `{path}` | {_cell(kind)} | {_cell(default)} | {_cell(value.get('description'))} |")
    return "\n".join(lines) + "\n"


# -- metrics ----------------------------------------------------------------------------------

def metrics() -> list[tuple[str, str, str, list[str]]]:
    """(name, type, help, labels) of every SkillGym collector."""
    from prometheus_client import REGISTRY

    for module in METRIC_MODULES:
        importlib.import_module(module)
    found = {}
    for collector in list(REGISTRY._collector_to_names):
        name = getattr(collector, "_name", "")
        if name.startswith("skillgym_"):
            kind = getattr(collector, "_type", "")
            shown = f"{name}_total" if kind == "counter" and not name.endswith("_total") else name
            found[shown] = (shown, kind, getattr(collector, "_documentation", ""), list(getattr(collector, "_labelnames", ())))
    return [found[k] for k in sorted(found)]


def metrics_page() -> str:
    lines = ["# Metrics", "", "Generated from the Prometheus collectors SkillGym registers.", "",
             "| metric | type | labels | meaning |", "| --- | --- | --- | --- |"]
    lines += [f"| `{n}` | {t} | {', '.join(f'`{x}`' for x in labels)} | {_cell(h)} |" for n, t, h, labels in metrics()]
    return "\n".join(lines) + "\n"


# -- measured ---------------------------------------------------------------------------------

def _figures(value: Any, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and depth < 2:
        for key, inner in value.items():
            yield from _figures(inner, f"{prefix}.{key}" if prefix else str(key), depth + 1)
    elif isinstance(value, (int, float, str, bool)) and not (isinstance(value, str) and len(value) > 120):
        yield prefix, value


def measured_page() -> str:
    lines = ["# Measured", "", "Generated from `benchmarks/results/*.json`: each benchmark's headline figures as it",
             "wrote them, with its command and the machine it ran on. Ratios are against a peer run side by side.", ""]
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        module = ROOT / "benchmarks" / f"{path.stem}.py"
        source = module.read_text() if module.is_file() else ""
        doc = source.split('"""')[1].strip().splitlines()[0] if '"""' in source else ""
        lines += [f"## {path.stem}", "", _cell(doc), "", f"Command: `python -m benchmarks.{path.stem}`"
                  if module.is_file() else f"Written by another benchmark (`{path.name}`).", ""]
        rows = list(_figures(data))[:40] if isinstance(data, dict) else []
        if rows:
            lines += ["| figure | value |", "| --- | --- |"]
            lines += [f"| `{k}` | {_cell(v)} |" for k, v in rows]
        lines.append("")
    return "\n".join(lines) + "\n"


PAGES = {"commands.md": commands_page, "settings.md": settings_page, "families.md": families_page,
         "events.md": events_page, "chart-values.md": chart_page, "metrics.md": metrics_page,
         "measured.md": measured_page}


def main() -> None:
    from skillgym.docs_report_example import write_example

    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "reference"
    dest.mkdir(parents=True, exist_ok=True)
    print(f"wrote {write_example(dest / 'report-example')}")
    for name, page in PAGES.items():
        (dest / name).write_text(page(), encoding="utf-8")
        print(f"wrote {dest / name}")


if __name__ == "__main__":
    main()
