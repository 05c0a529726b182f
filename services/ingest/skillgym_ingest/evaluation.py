"""Score ingest against hand labels: precision and recall per need flag, pairwise for duplicate clusters.

Labels name skills by folder; records are matched to them by the last part of their ``source``.
Every score comes with the skills behind its errors, so a reviewer can go straight to them."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgym_core.contracts.skill import SkillRecord

from skillgym_ingest.errors import LabelsError

BOOLEAN_FLAGS = ("network", "gpu", "credentials")


@dataclass(frozen=True)
class SkillLabels:
    network: bool
    gpu: bool
    credentials: bool
    binaries: frozenset[str]


@dataclass(frozen=True)
class CorpusLabels:
    skills: dict[str, SkillLabels]
    clusters: list[frozenset[str]]

    def duplicate_pairs(self) -> set[tuple[str, str]]:
        return {pair for cluster in self.clusters for pair in itertools.combinations(sorted(cluster), 2)}


def load_labels(path: Path) -> CorpusLabels:
    try:
        data = json.loads(path.read_text())
        skills = {
            name: SkillLabels(bool(item["network"]), bool(item["gpu"]), bool(item["credentials"]),
                              frozenset(item["binaries"]))
            for name, item in data["skills"].items()
        }
        clusters = [frozenset(cluster) for cluster in data.get("duplicate_clusters", [])]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LabelsError(f"cannot read labels from {path}: {exc}") from exc
    unknown = sorted(name for cluster in clusters for name in cluster if name not in skills)
    if unknown:
        raise LabelsError(f"duplicate clusters name unlabelled skills: {', '.join(unknown)}")
    return CorpusLabels(skills, clusters)


def folder_of(record: SkillRecord) -> str:
    return record.source.rstrip("/").rsplit("/", 1)[-1]


def predicted_flags(record: SkillRecord) -> dict[str, Any]:
    """The annotator's answer for each labelled flag, read from ``record.runtime``."""
    runtime = {key: annotation.value for key, annotation in record.runtime.items()}
    credentials = runtime.get("credentials")
    if isinstance(credentials, dict):
        needs_credentials = bool(credentials.get("required"))
    else:  # records from before the credentials annotation: any API-key-like variable counts
        needs_credentials = bool((runtime.get("env_vars") or {}).get("api_keys"))
    return {
        "network": bool((runtime.get("network") or {}).get("required")),
        "gpu": bool((runtime.get("gpu") or {}).get("required")),
        "credentials": needs_credentials,
        "binaries": frozenset(runtime.get("external_binaries") or ()),
    }


def _ratio(numerator: int, denominator: int) -> float:
    return round(numerator / denominator, 4) if denominator else 1.0


def _prf(tp: int, fp: int, fn: int) -> dict[str, Any]:
    return {"precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn), "tp": tp, "fp": fp, "fn": fn}


def score(records: Iterable[SkillRecord], labels: CorpusLabels) -> dict[str, Any]:
    by_folder = {folder_of(record): record for record in records}
    missing = sorted(set(labels.skills) - set(by_folder))
    if missing:
        raise LabelsError(f"labelled skills not found among the records: {', '.join(missing)}")
    predictions = {name: predicted_flags(by_folder[name]) for name in sorted(labels.skills)}
    report: dict[str, Any] = {"skills": len(predictions), "flags": {}}
    for flag in BOOLEAN_FLAGS:
        wrong_yes = [n for n, p in predictions.items() if p[flag] and not getattr(labels.skills[n], flag)]
        wrong_no = [n for n, p in predictions.items() if not p[flag] and getattr(labels.skills[n], flag)]
        right_yes = sum(1 for n, p in predictions.items() if p[flag] and getattr(labels.skills[n], flag))
        report["flags"][flag] = {**_prf(right_yes, len(wrong_yes), len(wrong_no)),
                                 "false_positives": wrong_yes, "false_negatives": wrong_no}
    extra = sorted(f"{n}:{b}" for n, p in predictions.items() for b in p["binaries"] - labels.skills[n].binaries)
    absent = sorted(f"{n}:{b}" for n, p in predictions.items() for b in labels.skills[n].binaries - p["binaries"])
    found = sum(len(p["binaries"] & labels.skills[n].binaries) for n, p in predictions.items())
    report["flags"]["binaries"] = {**_prf(found, len(extra), len(absent)),
                                   "false_positives": extra, "false_negatives": absent}
    report["duplicates"] = _cluster_scores(by_folder, labels)
    return report


def predicted_pairs(records: dict[str, SkillRecord]) -> set[tuple[str, str]]:
    """Folder pairs that ingest put in the same duplicate cluster."""
    clusters: dict[str, list[str]] = {}
    for name, record in records.items():
        if record.duplicate_cluster is not None:
            clusters.setdefault(record.duplicate_cluster, []).append(name)
    return {pair for members in clusters.values() for pair in itertools.combinations(sorted(members), 2)}


def _cluster_scores(records: dict[str, SkillRecord], labels: CorpusLabels) -> dict[str, Any]:
    labelled = {name: records[name] for name in labels.skills}
    predicted, truth = predicted_pairs(labelled), labels.duplicate_pairs()
    return {**_prf(len(predicted & truth), len(predicted - truth), len(truth - predicted)),
            "false_pairs": [list(p) for p in sorted(predicted - truth)],
            "missed_pairs": [list(p) for p in sorted(truth - predicted)]}
