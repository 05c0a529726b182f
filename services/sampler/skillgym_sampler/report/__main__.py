"""``python -m skillgym_sampler.report RUN_DIR_OR_STORE OUT_DIR [--include-reference] [--workers N]``"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from skillgym_sampler.report.build import build_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m skillgym_sampler.report", description=__doc__)
    parser.add_argument("source", type=Path, help="a run directory (with store/) or a local store root")
    parser.add_argument("out", type=Path)
    parser.add_argument("--include-reference", action="store_true", help="count oracle and nop runs too")
    parser.add_argument("--workers", type=int, default=1, help="tokenizer threads beside the reader")
    args = parser.parse_args(argv)
    report = build_report(args.source, args.out, include_reference=args.include_reference, workers=args.workers)
    print(json.dumps({"out": str(args.out / "report.html"), "funnel": report["funnel"]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
