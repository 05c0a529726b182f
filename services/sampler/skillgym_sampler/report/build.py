"""The dataset statistics report: JSON and an HTML page with PNG plots.

``build_report(run_dir_or_store, out_dir)`` streams every stored run once: verification records
give attempts, passes, rewards and explicit skill use; ATIF documents of passed runs are measured
(tool calls, messages, steps, o200k_base tokens by component). Groups: overall, per configuration
(harness / model), per category, per configuration and skill condition."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillgym_core.store.base import Store

from skillgym_sampler.report.aggregate import Group, SkillDependence
from skillgym_sampler.report.pipeline import StreamCounts, measured_runs
from skillgym_sampler.report.render import render_html
from skillgym_sampler.report.source import funnel_counts, open_store
from skillgym_sampler.report.tokens import ENCODING, encoding

REPORT_VERSION = "1.0"


def configuration_of(record: dict[str, Any]) -> str:
    return f"{record.get('harness', 'unknown')} / {record.get('model', 'unknown')}"


def build_report(
    source: Store | Path | str,
    out_dir: Path | str,
    *,
    include_reference: bool = False,
    count: Callable[[str], int] | None = None,
    plots: bool = True,
    workers: int = 1,
) -> dict[str, Any]:
    """Compute the report, write ``report.json``, ``report.html`` and plots to ``out_dir``.

    ``workers`` tokenizer threads run beside the reading thread (0: tokenize inline)."""
    started = time.perf_counter()
    store = open_store(source)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if count is None:
        encode = encoding().encode_ordinary  # loaded once, outside the loop

        def count(text: str) -> int:
            return len(encode(text)) if text else 0
    overall = Group()
    groups: dict[str, dict[str, Group]] = {"configuration": {}, "category": {}, "configuration_skill": {}}
    dependence = SkillDependence()
    tasks_attempted: set[str] = set()
    tasks_passed: set[str] = set()
    counts = StreamCounts()
    for record, stats in measured_runs(store, count, counts, include_reference=include_reference,
                                       workers=workers):
        configuration = configuration_of(record)
        category = record.get("category") or "unknown"
        condition = "with skill" if record.get("skill_provided", True) else "without skill"
        overall.add(record, stats)
        for kind, name in (("configuration", configuration), ("category", category),
                           ("configuration_skill", f"{configuration} / {condition}")):
            groups[kind].setdefault(name, Group()).add(record, stats)
        dependence.add(configuration, record, category)
        tasks_attempted.add(str(record.get("task_id")))
        if record.get("passed"):
            tasks_passed.add(str(record.get("task_id")))
    funnel = {
        **funnel_counts(store),
        "tasks_sampled": len(tasks_attempted),
        "attempts": overall.attempts,
        "passed_runs": overall.passed,
        "tasks_with_a_passed_run": len(tasks_passed),
        "passed_runs_with_explicit_skill_use": overall.skill_read,
    }
    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "store": store.describe(),
        "tokenizer": ENCODING,
        "quantiles": "linear interpolation between closest ranks",
        "funnel": funnel,
        "overall": overall.summary(),
        "per_configuration": {k: g.summary() for k, g in sorted(groups["configuration"].items())},
        "per_category": {k: g.summary() for k, g in sorted(groups["category"].items())},
        "per_configuration_and_skill_condition": {
            k: g.summary() for k, g in sorted(groups["configuration_skill"].items())
        },
        "skill_dependence": {
            "per_configuration": dependence.ratios("configuration"),
            "per_category": dependence.ratios("category"),
        },
        "excluded_reference_runs": counts.reference_runs,
        "passed_runs_without_trajectory": counts.passed_without_trajectory,
    }
    report["compute_seconds"] = round(time.perf_counter() - started, 4)
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False))
    if plots:
        render_html(report, out)
    return report
