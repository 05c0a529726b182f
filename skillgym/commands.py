"""Stage commands that delegate to the services' own entry points."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from skillgym.console import console


def _cmd_validate(args: argparse.Namespace) -> int:
    from skillgym_validator.settings import ValidatorSettings
    from skillgym_validator.validation import summarize, validate_task_dirs

    overrides: dict[str, Any] = {}
    if args.baseline_llm:
        overrides["baseline_base_url"] = args.baseline_llm
        overrides["baseline_model"] = args.baseline_model
    if args.k:
        overrides["baseline_runs"] = args.k
    records = validate_task_dirs(args.tasks, ValidatorSettings(**overrides))
    if args.json:
        for record in records:
            print(json.dumps(record, default=str))
    else:
        for record in records:
            verdict = "valid" if record.get("valid") else "INVALID"
            reasons = "; ".join(record.get("reasons", []))
            console.print(f"{record.get('task', '?')}: {verdict} {record.get('label', '')} {reasons}")
    console.print_json(json.dumps(summarize(records), default=str))
    return 0 if all(record.get("valid") for record in records) else 1


def _cmd_report(args: argparse.Namespace) -> int:
    from skillgym_sampler.report import build_report

    report = build_report(args.run_dir, args.out, include_reference=args.include_reference, plots=not args.no_plots)
    out = Path(args.out)
    console.print(f"Report: {out / 'report.html'} ({len(report)} sections); data in {out / 'report.json'}")
    return 0


def register(sub: Any) -> None:
    """Attach the stage commands to the top-level parser."""
    validate = sub.add_parser("validate", help="prove v(x0)=0 and v(solution)=1 and label skill dependence")
    validate.add_argument("tasks", nargs="+", type=Path, help="Harbor task directories")
    validate.add_argument("--baseline-llm", metavar="URL", help="OpenAI-compatible endpoint of the baseline agent")
    validate.add_argument("--baseline-model", default="baseline")
    validate.add_argument("-k", type=int, help="baseline runs with and without the skill")
    validate.add_argument("--json", action="store_true", help="one JSON record per task on stdout")
    validate.set_defaults(func=_cmd_validate)

    report = sub.add_parser("report", help="dataset statistics (JSON + HTML with plots) of a run")
    report.add_argument("run_dir", type=Path, help="a run directory (holding store/) or a store root")
    report.add_argument("--out", type=Path, required=True)
    report.add_argument("--include-reference", action="store_true", help="count oracle and nop runs too")
    report.add_argument("--no-plots", action="store_true")
    report.set_defaults(func=_cmd_report)
