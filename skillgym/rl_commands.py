"""``skillgym train-rl``: GRPO on validated tasks served by an environment server
(``skillgym serve-env``), with rewards from the tasks' verifiers."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from skillgym.console import console

if TYPE_CHECKING:
    from skillgym_trainer.rl.grpo import GrpoReport


def _cmd_train_rl(args: argparse.Namespace) -> int:
    from skillgym_trainer.rl.grpo import REPORT_FILE, GrpoOptions, run_grpo

    options = GrpoOptions(
        env_url=args.env_url, task_ids=args.task, out_dir=args.out, base_model=args.base_model, steps=args.steps,
        reward=args.reward, skill_provided=not args.no_skill, env_token=os.environ.get("SKILLGYM_ENVSERVER_TOKEN"),
        num_generations=args.generations, max_completion_length=args.max_completion_tokens,
        max_tool_calls=args.max_tool_calls, learning_rate=args.lr, chat_template=args.chat_template,
        seed=args.seed, save_model=not args.no_save, progress=True,
    )  # fmt: skip
    report = run_grpo(options)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        _print_curve(report, args.out / REPORT_FILE)
    return 0 if report.episodes_played else 1


def _print_curve(report: GrpoReport, written_to: Path) -> None:
    table = Table(title=f"reward curve ({report.reward} reward)")
    for column in ("step", "reward mean", "reward std", "loss", "episodes", "passed", "failed", "step s"):
        table.add_column(column, justify="right")
    for point in report.curve:
        table.add_row(str(point.step), _shown(point.reward_mean), _shown(point.reward_std), _shown(point.loss),
                      str(point.episodes), str(point.episodes_passed), str(point.failed_episodes),
                      _shown(point.step_time_s, 1))  # fmt: skip
    console.print(table)
    console.print(f"{report.episodes_played} episodes played, {report.episodes_passed} passed, "
                  f"{report.failed_episodes} failed on the server; {report.wall_time_s:.0f} s of training")  # fmt: skip
    console.print(f"report: {written_to}" + (f"; model: {report.model_dir}" if report.model_dir else ""))


def _shown(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def register(sub: Any) -> None:
    train_rl = sub.add_parser("train-rl", help="GRPO on validated tasks served by an environment server")
    train_rl.add_argument("--env-url", required=True, metavar="URL",
                          help="the environment server (skillgym serve-env); a bearer token is read from "
                               "SKILLGYM_ENVSERVER_TOKEN")  # fmt: skip
    train_rl.add_argument("--task", action="append", required=True, metavar="ID", help="a task id; repeatable")
    train_rl.add_argument("--steps", type=int, default=10, help="optimizer steps (default 10)")
    train_rl.add_argument("--out", type=Path, required=True, metavar="DIR",
                          help="where reward_curve.json and the trained model go")  # fmt: skip
    train_rl.add_argument("--reward", choices=["binary", "rubric", "shaped"], default="binary")
    train_rl.add_argument("--base-model", default="smollm2", help="smollm2 or a model folder")
    train_rl.add_argument("--generations", type=int, default=2, help="rollouts per task and step, compared (>= 2)")
    train_rl.add_argument("--max-completion-tokens", type=int, default=256,
                          help="tokens of one rollout, tool results included (default 256)")  # fmt: skip
    train_rl.add_argument("--max-tool-calls", type=int, default=4, help="tool-calling rounds per rollout (default 4)")
    train_rl.add_argument("--lr", type=float, default=1e-6)
    train_rl.add_argument("--chat-template", choices=["qwen2_5", "skillgym"], default="qwen2_5",
                          help="qwen2_5: TRL's Qwen2.5 ChatML tool template; skillgym: the SFT/serving template")  # fmt: skip
    train_rl.add_argument("--no-skill", action="store_true", help="open episodes without the task's skill")
    train_rl.add_argument("--no-save", action="store_true", help="do not save the trained model")
    train_rl.add_argument("--seed", type=int, default=0)
    train_rl.add_argument("--json", action="store_true", help="print the whole report as JSON on stdout")
    train_rl.set_defaults(func=_cmd_train_rl)
