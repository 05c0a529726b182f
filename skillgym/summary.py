"""Pipeline counts, computed from the events themselves so embedded and distributed runs are
summarised by the same code."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from skillgym_core.contracts.events import (
    EnvBuilt,
    Envelope,
    EnvReviewed,
    EnvValidated,
    SkillIngested,
    TrainingCompleted,
    TrajectoryVerified,
)
from skillgym_core.errors import StoreError
from skillgym_core.store.base import Store, get_json

FALLBACK_OUTCOME = "llm_fallback"  # the builder's fallback records (skillgym_builder.fallback)

SUMMARY_FIELDS = (
    "skills_seen",
    "skills_accepted",
    "tasks_built",
    "tasks_approved",
    "tasks_validated",
    "trajectories_attempted",
    "trajectories_passed",
    "dataset_examples",
)


def read_build_reports(store: Store) -> Iterator[dict[str, Any]]:
    """The builder's per-skill records (``skills/<id>/build.json``: built with which family, or
    skipped and why) and its fallback records (``skills/<id>/fallbacks/<task>.json``: a task the
    family instance or a template made because the builder agent failed)."""
    for key in store.list("skills/"):
        if key.endswith("/build.json") or ("/fallbacks/" in key and key.endswith(".json")):
            try:
                report = get_json(store, key)
            except (StoreError, ValueError):
                continue
            if isinstance(report, dict):
                yield report


def _per_family(events: list[Envelope]) -> dict[str, dict[str, int]]:
    """Tasks built, approved and validated per task family (the ``template`` a task was built from)."""
    family_of: dict[str, str] = {}
    stages: dict[str, dict[str, set[str]]] = {}
    for event in events:
        payload = event.payload
        if isinstance(payload, EnvBuilt):
            family_of[payload.task_id] = payload.template
    for event in events:
        payload = event.payload
        stage = ("built" if isinstance(payload, EnvBuilt) else
                 "approved" if isinstance(payload, EnvReviewed) and payload.approved else
                 "validated" if isinstance(payload, EnvValidated) and payload.valid else None)
        task_id = getattr(payload, "task_id", None)
        if stage and task_id in family_of:
            stages.setdefault(family_of[task_id], {}).setdefault(stage, set()).add(task_id)
    return {family: {stage: len(stages[family].get(stage, set())) for stage in ("built", "approved", "validated")}
            for family in sorted(stages)}


def _skipped(events: list[Envelope], reports: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Skills the builder got but built nothing for, and the builder's reasons where it recorded them."""
    ingested = {e.payload.skill_id for e in events if isinstance(e.payload, SkillIngested)}
    built = {e.payload.skill_id for e in events if isinstance(e.payload, EnvBuilt)}
    reasons = Counter(str(r.get("skip_reason") or r.get("reason") or "unknown")
                      for r in reports if r.get("outcome") == "skipped" and r.get("skill_id") not in built)
    return {"skills_without_task": len(ingested - built), "skills_skipped_by_reason": dict(sorted(reasons.items()))}


def _per_builder(events: list[Envelope], reports: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Tasks per builder (family, template, llm), and every task a fallback made, with the reason
    the builder agent failed."""
    builder_of = {e.payload.task_id: e.payload.builder for e in events if isinstance(e.payload, EnvBuilt)}
    fallbacks = sorted(
        ({k: r.get(k) for k in ("skill_id", "task_id", "family", "revision", "builder", "error", "reason")}
         for r in reports if r.get("outcome") == FALLBACK_OUTCOME),
        key=lambda f: (str(f["skill_id"]), int(f["revision"] or 0), str(f["task_id"])),
    )
    return {
        "tasks_by_builder": dict(sorted(Counter(builder_of.values()).items())),
        "llm_fallbacks": fallbacks,
        "llm_fallbacks_by_error": dict(sorted(Counter(str(f["error"]) for f in fallbacks).items())),
    }


def summarize(
    events: Iterable[Envelope], *, skills_seen: int, skills_accepted: int,
    build_reports: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    """``build_reports`` (see :func:`read_build_reports`) adds why skipped skills got no task and
    which tasks a fallback made."""
    events = list(events)
    build_reports = list(build_reports)
    built: set[str] = set()
    approved: set[str] = set()
    validated: set[str] = set()
    attempted: set[str] = set()
    passed: set[str] = set()
    by_harness: dict[str, dict[str, int]] = {}
    training: TrainingCompleted | None = None
    for event in events:
        payload = event.payload
        if isinstance(payload, EnvBuilt):
            built.add(payload.task_id)
        elif isinstance(payload, EnvReviewed) and payload.approved:
            approved.add(payload.task_id)
        elif isinstance(payload, EnvValidated) and payload.valid:
            validated.add(payload.task_id)
        elif isinstance(payload, TrajectoryVerified):
            if payload.trajectory_id in attempted:
                continue
            attempted.add(payload.trajectory_id)
            stats = by_harness.setdefault(payload.harness, {"attempted": 0, "passed": 0})
            stats["attempted"] += 1
            if payload.passed:
                passed.add(payload.trajectory_id)
                stats["passed"] += 1
        elif isinstance(payload, TrainingCompleted):
            training = payload
    return {
        "skills_seen": skills_seen,
        "skills_accepted": skills_accepted,
        "tasks_built": len(built),
        "tasks_approved": len(approved),
        "tasks_validated": len(validated),
        "trajectories_attempted": len(attempted),
        "trajectories_passed": len(passed),
        "dataset_examples": training.examples if training else 0,
        "training_loss_first": training.loss_first if training else None,
        "training_loss_last": training.loss_last if training else None,
        "training_steps": training.steps if training else 0,
        "checkpoint_key": training.checkpoint_key if training else None,
        "by_harness": by_harness,
        "tasks_by_family": _per_family(events),
        **_per_builder(events, build_reports),
        **_skipped(events, build_reports),
    }


def write_pipeline_funnel(path: Path, ingest_funnel: dict[str, int], summary: dict[str, Any]) -> None:
    """``funnel.json`` of a whole run: ingestion's counts, then what became of accepted skills
    (tasks per family and stage, tasks per builder and the fallbacks, skills skipped per reason)."""
    funnel = {
        "ingest": dict(sorted(ingest_funnel.items())),
        "build": {
            "tasks_by_family": summary.get("tasks_by_family", {}),
            "tasks_by_builder": summary.get("tasks_by_builder", {}),
            "llm_fallbacks": summary.get("llm_fallbacks", []),
            "skills_without_task": summary.get("skills_without_task", 0),
            "skills_skipped_by_reason": summary.get("skills_skipped_by_reason", {}),
        },
        "tasks": {stage: summary.get(stage, 0) for stage in ("tasks_built", "tasks_approved", "tasks_validated")},
    }
    path.write_text(json.dumps(funnel, indent=2, sort_keys=True) + "\n")


def skill_dependence(store: Store, events: Iterable[Envelope]) -> dict[str, Any]:
    """Skill-Dep. / Verifier-Passed counts of the validated tasks, and McNemar's exact test over
    those whose validation ran the with/without-skill contrast (a baseline model was configured)."""
    from skillgym_validator.validation import summarize as summarize_validation

    records = []
    for event in events:
        payload = event.payload
        if isinstance(payload, EnvValidated) and payload.valid and payload.report_key:
            try:
                records.append(get_json(store, payload.report_key))
            except (StoreError, KeyError, FileNotFoundError, ValueError):  # the event's label still counts
                records.append({"label": payload.label, "valid": True})
    return summarize_validation(records)
