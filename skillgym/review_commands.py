"""``skillgym review`` (every reviewer gate on task directories on disk) and ``skillgym verify``
(only a task's trusted verifier, on a given final workspace). Each task gets one record, even a
missing or broken one; errors are one typed line, never a traceback."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

EXIT_REJECTED = 1
EXIT_ERROR = 2


def error_info(exc: BaseException) -> dict[str, Any]:
    reason = str(getattr(exc, "reason", "")) or "reviewer_crash"
    return {"type": type(exc).__name__, "reason": reason, "message": str(exc)[:500]}


def error_record(path: Path, exc: BaseException) -> dict[str, Any]:
    info = error_info(exc)
    return {
        "path": str(path), "task_id": None, "template": None, "passed": False, "failure_type": None,
        "reasons": [f"error: {info['reason']}: {info['message']}"], "error": info, "gates": [], "mutation": None,
        "timings": {},
    }  # fmt: skip


def report_record(path: Path, report: Any) -> dict[str, Any]:
    """The CLI's record of a :class:`~skillgym_reviewer.report.ReviewReport`."""
    gates = [{"gate": g.gate, "passed": g.passed, "failure_type": g.failure_type, "reasons": g.reasons,
              "seconds": g.seconds} for g in report.gates]  # fmt: skip
    timings = {g.gate: g.seconds for g in report.gates if g.seconds is not None}
    return {
        "path": str(path), "task_id": report.task_id, "template": report.template, "passed": report.passed,
        "failure_type": report.failure_type, "reasons": report.reasons, "gates": gates, "mutation": report.mutation,
        "timings": {"total_s": report.seconds, **timings},
    }  # fmt: skip


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1]: {value}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def _summary_line(record: dict[str, Any]) -> str:
    name = record.get("task_id") or record["path"]
    mutation = record.get("mutation") or {}
    score = mutation.get("score")
    scored = f" mutation score {score:.2f} ({mutation.get('killed')}/{mutation.get('tried')})" if score is not None else ""
    seconds = (record.get("timings") or {}).get("total_s")
    took = f" {seconds:.1f} s" if isinstance(seconds, int | float) else ""
    if record["passed"]:
        return f"PASS {name}{scored}{took}"
    if record.get("error"):
        return f"ERROR {name}: {record['error']['reason']}: {record['error']['message']}"
    reasons = "; ".join(record.get("reasons", [])[:4])
    return f"FAIL {name} {record.get('failure_type') or 'error'}{scored}{took}: {reasons}"


def _review_all(paths: list[Path], overrides: dict[str, Any]) -> list[dict[str, Any]]:
    from skillgym_reviewer import DirReviewer, ReviewerSettings

    try:
        reviewer = DirReviewer(ReviewerSettings(**overrides))
    except Exception as exc:  # no reviewer (settings, sandbox): each task still gets its record
        return [error_record(path, exc) for path in paths]
    records = []
    with reviewer:
        for path in paths:
            try:
                records.append(report_record(path, reviewer.review(path)))
            except Exception as exc:  # one task's failure is that task's record
                records.append(error_record(path, exc))
    return records


def _cmd_review(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {}
    if args.threshold is not None:
        overrides["mutation_min_score"] = args.threshold
    if args.max_mutants is not None:
        overrides["mutation_max_mutants"] = args.max_mutants
    records = _review_all(list(args.tasks), overrides)
    for record in records:
        if args.json:
            print(json.dumps(record, default=str), flush=True)
        else:
            print(_summary_line(record), flush=True)
    return 0 if records and all(record["passed"] for record in records) else EXIT_REJECTED


def verify_record(path: Path, workspace: Path) -> dict[str, Any]:
    from skillgym_core.contracts.task import TaskDir
    from skillgym_reviewer import verify_task_workspace

    outcome = verify_task_workspace(path, workspace)
    try:
        task_id: str | None = TaskDir(path).config().metadata.task_id
    except Exception:  # the verifier ran; a task.toml it did not need may still be unreadable
        task_id = None
    return {
        "path": str(path), "workspace": str(workspace), "task_id": task_id, "passed": outcome.passed,
        "reward": outcome.reward, "rewards": {k: v for k, v in outcome.rewards.items() if k != "reward"},
        "failure_type": outcome.failure_type, "detail": outcome.detail, "rubric": outcome.rubric,
        "tampered": outcome.tampered,
    }  # fmt: skip


def _cmd_verify(args: argparse.Namespace) -> int:
    try:
        record = verify_record(args.task, args.workspace)
    except Exception as exc:  # a typed one-line error, never a traceback
        info = error_info(exc)
        record = {"path": str(args.task), "workspace": str(args.workspace), "passed": False, "error": info}
        if args.json:
            print(json.dumps(record, default=str))
        else:
            print(f"ERROR {info['reason']}: {info['message']}")
        return EXIT_ERROR
    if args.json:
        print(json.dumps(record, default=str))
    else:
        items = ", ".join(f"{name} {score:.2f}" for name, score in record["rewards"].items())
        verdict = "PASS" if record["passed"] else f"FAIL {record['failure_type']}"
        print(f"{verdict} reward {record['reward']:.3f}" + (f" ({items})" if items else ""))
    return 0 if record["passed"] else EXIT_REJECTED


def register(sub: Any) -> None:
    """Attach ``review`` and ``verify`` to the top-level parser."""
    review = sub.add_parser("review", help="run every reviewer gate (mutation probes included) on task directories")
    review.add_argument("tasks", nargs="+", type=Path, help="Harbor task directories")
    review.add_argument("--json", action="store_true", help="one JSON record per task on stdout")
    review.add_argument("--threshold", type=_threshold, help="lowest mutation score that passes (default 0.9)")
    review.add_argument("--max-mutants", type=_positive, help="mutated outputs per task (default 40)")
    review.set_defaults(func=_cmd_review)

    verify = sub.add_parser("verify", help="run only a task's trusted verifier on a final workspace")
    verify.add_argument("task", type=Path, help="a Harbor task directory")
    verify.add_argument("--workspace", type=Path, required=True, help="the final workspace to grade")
    verify.add_argument("--json", action="store_true", help="the verdict as one JSON record")
    verify.set_defaults(func=_cmd_verify)
