"""Fault-injection soak of the distributed pipeline, at a size and with outages longer than the
test's (``tests/e2e/test_faults.py`` runs the same harness small): a clean run of the input as
the reference, then the same input while every service is killed mid-stage, the broker and the
store go down, the store stays down across a service restart and the trainer dies mid-run.

Reports per fault what was lost, duplicated and redelivered and how long recovery took.
Run: ``python -m benchmarks.soak [--variants 2] [--outage 60] [--faults kill,broker,...]``;
writes ``benchmarks/results/soak.json``. Needs ``scripts/install-services.sh``."""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from skillgym_core.sandbox.hostmounts import unmount
from skillgym_core.sandbox.janitor import mount_points_below, remove_tree

from tests.e2e.conftest import explorer_agent
from tests.e2e.soak.faults import FAULT_KINDS, plan
from tests.e2e.soak.harness import SoakResult, SoakSettings, pipeline_env, soak
from tests.e2e.soak.inputs import soak_input
from tests.e2e.soak.report import as_json, table
from tests.support.scripted_llm import ScriptedLLMServer
from tests.support.services import start_kafka, start_s3

RESULTS = Path(__file__).resolve().parent / "results" / "soak.json"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=None, help="example skills to start from (default: all)")
    parser.add_argument("--variants", type=int, default=2, help="variants of each example skill on top of it")
    parser.add_argument("--waves", type=int, default=3, help="parts the faulted run publishes the input in")
    parser.add_argument("--outage", type=float, default=60.0, help="seconds the broker and the store stay down")
    parser.add_argument("--faults", default=",".join(FAULT_KINDS), help=f"comma-separated: {', '.join(FAULT_KINDS)}")
    parser.add_argument("--train-steps", type=int, default=48)
    parser.add_argument("--checkpoint-every", type=int, default=8)
    parser.add_argument("--patience", type=float, default=120.0, help="seconds a fault waits for work in flight")
    parser.add_argument("--workdir", type=Path, default=None, help="keep logs and data here (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser.parse_args()


def _summary(result: SoakResult, args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    crashes = [e for e in result.faulted.exits if not e.killed]
    return {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "settings": {
            "skills": args.skills or "all", "variants": args.variants, "waves": args.waves, "outage_s": args.outage,
            "faults": args.faults.split(","), "train_steps": args.train_steps,
            "checkpoint_every": args.checkpoint_every,
        },
        "seconds": {"total": round(seconds, 1), "clean_run": round(result.reference.seconds, 1),
                    "faulted_run": round(result.faulted.seconds, 1)},
        "training_examples": len(result.reference.examples),
        "table": table(result.audit).splitlines(),
        **as_json(result.audit),
        "injections": [asdict(i) for i in result.faulted.injections],
        "ready_at_end": result.faulted.ready,
        "lag_at_end": result.faulted.lags,
        "restarts": {"killed": sum(e.killed for e in result.faulted.exits), "exited_on_their_own": len(crashes)},
        "exits_on_their_own": [{"service": e.service, "returncode": e.returncode, "log_tail": e.log_tail[-600:]}
                               for e in crashes],
    }


def _release(workdir: Path, keep: bool) -> None:
    """A service killed in the middle of a sandboxed run leaves that run's workspace mounted:
    detach what is left below ``workdir`` (and remove it, unless it is to be kept)."""
    if keep:
        for point in mount_points_below(workdir):
            unmount(Path(point))
    else:
        remove_tree(workdir)


def main() -> None:
    args = _arguments()
    started = time.monotonic()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="skillgym-soak-"))
    try:
        skills = soak_input(workdir / "skills", skills=args.skills, variants=args.variants)
        with (
            start_kafka(workdir / "kafka") as kafka,
            start_s3(workdir / "s3") as s3,
            ScriptedLLMServer(explorer_agent()) as teacher,
        ):
            settings = SoakSettings(
                skills=skills,
                faults=plan(args.outage, args.faults.split(",")),
                env=pipeline_env(teacher.base_url, train_steps=args.train_steps,
                                 checkpoint_every=args.checkpoint_every),
                waves=args.waves,
                strike_patience_s=args.patience,
            )
            result = soak(kafka, s3, settings, workdir)
    finally:
        _release(workdir, keep=args.workdir is not None)
    summary = _summary(result, args, time.monotonic() - started)
    print(table(result.audit))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
