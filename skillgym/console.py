"""Terminal output: progress while the pipeline runs, a summary table at the end."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from skillgym.summary import SUMMARY_FIELDS

console = Console(stderr=True)

STAGE_LABELS = {
    "ingest": "Ingesting skills",
    "builder": "Building tasks",
    "reviewer": "Reviewing tasks",
    "validator": "Validating tasks",
    "sampler": "Sampling trajectories",
    "trainer": "Training the student",
}


class StageProgress:
    """A live status line naming the stage and the events on each topic so far."""

    def __init__(self) -> None:
        self._status = console.status("Starting…")

    def __enter__(self) -> StageProgress:
        self._status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._status.__exit__(None, None, None)

    def __call__(self, stage: str, counts: dict[str, int]) -> None:
        shown = " · ".join(f"{topic} {n}" for topic, n in counts.items() if n)
        self._status.update(f"[bold]{STAGE_LABELS.get(stage, stage)}[/bold]  {shown}")


def summary_table(summary: dict[str, Any]) -> Table:
    table = Table(title="SkillGym run summary", show_header=True)
    table.add_column("stage")
    table.add_column("count", justify="right")
    for key in SUMMARY_FIELDS:
        table.add_row(key.replace("_", " "), str(summary.get(key, 0)))
    first, last = summary.get("training_loss_first"), summary.get("training_loss_last")
    if first is not None and last is not None:
        table.add_row("training loss", f"{first:.4f} → {last:.4f}")
    for harness, stats in sorted(summary.get("by_harness", {}).items()):
        table.add_row(f"  {harness} passed", f"{stats['passed']}/{stats['attempted']}")
    dependence = summary.get("skill_dependence") or {}
    for label, count in sorted((dependence.get("labels") or {}).items()):
        table.add_row(f"  tasks {label}", str(count))
    if dependence.get("mcnemar"):
        test = dependence["mcnemar"]
        table.add_row("  solved only with / only without skill",
                      f"{test['only_with']}/{test['only_without']} (McNemar p {test['p_value']:.3g})")
    if summary.get("local_model"):
        table.add_row("  local model", str(summary["local_model"]))
    for builder, count in sorted((summary.get("tasks_by_builder") or {}).items()):
        table.add_row(f"  tasks built by {builder}", str(count))
    for reason, count in sorted((summary.get("skills_skipped_by_reason") or {}).items()):
        table.add_row(f"  skills skipped: {reason}", str(count))
    variety = summary.get("instruction_variety") or {}
    if variety.get("near_identical_pairs"):
        table.add_row("[yellow]near-identical tasks across skills[/yellow]",
                      f"{variety['near_identical_pairs']} pairs, {variety['skills_involved']} skills")
    fallbacks = summary.get("llm_fallbacks") or []
    if fallbacks:
        table.add_row("[yellow]LLM builder fallbacks[/yellow]", str(len(fallbacks)))
    if summary.get("dead_letters"):
        table.add_row("[red]dead letters[/red]", str(summary["dead_letters"]))
    if summary.get("seconds") is not None:
        table.add_row("wall time (s)", str(summary["seconds"]))
    return table
