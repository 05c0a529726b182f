"""The dataset card: what is in a dataset and how it was made, as JSON and markdown."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from skillgym_core.provenance import SOURCES

from skillgym_trainer.curation.hidden import HIDDEN_PATH_REFERENCE
from skillgym_trainer.curation.records import Candidate
from skillgym_trainer.tokens import count_example


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def split_stats(candidates: Sequence[Candidate]) -> dict[str, Any]:
    tokens = [count_example(c.example) for c in candidates]
    calls = [
        sum(len(m.get("tool_calls") or []) for m in c.example["messages"] if m["role"] == "assistant")
        for c in candidates
    ]
    return {
        "examples": len(candidates),
        "trajectories": len({c.trajectory_id for c in candidates}),
        "skills": len({c.skill_id for c in candidates}),
        "tasks": len({c.task_id for c in candidates}),
        "categories": dict(sorted(Counter(c.category for c in candidates).items())),
        "labels": dict(sorted(Counter(c.label for c in candidates).items())),
        "configurations": dict(sorted(Counter(c.configuration for c in candidates).items())),
        "sources": dict(sorted(Counter(c.source for c in candidates).items())),
        "tokens_o200k": {
            "total": sum(tokens),
            "mean": statistics.fmean(tokens) if tokens else 0.0,
            "median": percentile(tokens, 0.5),
            "p90": percentile(tokens, 0.9),
            "p95": percentile(tokens, 0.95),
            "max": max(tokens, default=0),
        },
        "tool_calls": {"median": percentile(calls, 0.5), "p90": percentile(calls, 0.9), "max": max(calls, default=0)},
    }


def source_shares(candidates: Sequence[Candidate]) -> dict[str, dict[str, float]]:
    """Examples and share of each source (``reference``, ``model``) over the whole dataset."""
    counts = Counter(c.source for c in candidates)
    total = sum(counts.values())
    return {
        source: {"examples": counts.get(source, 0), "share": round(counts.get(source, 0) / total, 4) if total else 0.0}
        for source in SOURCES
    }


def rejected_by_reason(pipeline: dict[str, Any]) -> dict[str, int]:
    """Examples each curation stage removed, by reason; stages that removed none are left out."""
    removed: Counter[str] = Counter(pipeline.get("filtered") or {})
    removed["exact_duplicate"] += int(pipeline.get("exact_duplicates") or 0)
    removed["near_duplicate"] += int(pipeline.get("near_duplicates") or 0)
    removed["too_long"] += int((pipeline.get("length") or {}).get("dropped") or 0)
    removed["over_task_cap"] += int(pipeline.get("task_cap") or 0)
    removed["balance"] += sum((pipeline.get("balance") or {}).values())
    return {reason: count for reason, count in sorted(removed.items()) if count}


def card_counts(card: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a dataset card: trajectories loaded, examples kept per split,
    examples rejected by reason and each source's share."""
    splits = card["splits"]
    return {
        "loaded": card["pipeline"]["loaded"],
        "kept": {"train": splits["train"]["examples"], "eval": splits["eval"]["examples"],
                 "total": splits["train"]["examples"] + splits["eval"]["examples"]},
        "rejected": rejected_by_reason(card["pipeline"]),
        "load_errors": len(card.get("load_errors") or []),
        "sources": card.get("sources", {}),
    }  # fmt: skip


def render_markdown(card: dict[str, Any]) -> str:
    lines = [
        f"# Dataset {card['name']} v{card['version']} ({card['dataset_id']})",
        "",
        f"Built from {card['pipeline']['loaded']} verified trajectories in `{card['source']}`.",
        "",
        "## Curation",
        "",
        "| stage | removed |",
        "|---|---|",
    ]
    for stage, value in card["pipeline"].items():
        if stage == HIDDEN_PATH_REFERENCE:
            lines.append(f"| {stage} | {value['count']} {value['paths'] or ''} |")
        elif stage != "loaded":
            lines.append(f"| {stage} | {value} |")
    lines += [
        "",
        "## Splits",
        "",
        "| split | examples | skills | tasks | tokens (median / p90) |",
        "|---|---|---|---|---|",
    ]
    for name, stats in card["splits"].items():
        tok = stats["tokens_o200k"]
        lines.append(
            f"| {name} | {stats['examples']} | {stats['skills']} | {stats['tasks']} | "
            f"{tok['median']:.0f} / {tok['p90']:.0f} |"
        )
    lines += ["", "## Sources", "", "| source | train | eval | share |", "|---|---|---|---|"]
    for source, entry in card.get("sources", {}).items():
        train, evaluation = (card["splits"][name].get("sources", {}).get(source, 0) for name in ("train", "eval"))
        lines.append(f"| {source} | {train} | {evaluation} | {entry['share']:.1%} |")
    for field in ("categories", "configurations", "labels"):
        lines += ["", f"## {field.title()}", "", "| value | train | eval |", "|---|---|---|"]
        names = sorted(set(card["splits"]["train"][field]) | set(card["splits"]["eval"][field]))
        for value in names:
            lines.append(
                f"| {value} | {card['splits']['train'][field].get(value, 0)} | "
                f"{card['splits']['eval'][field].get(value, 0)} |"
            )
    lines += ["", "## Configuration", "", "```json", card["config_json"], "```", ""]
    return "\n".join(lines)
