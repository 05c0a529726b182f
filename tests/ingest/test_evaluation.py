"""Scoring against hand labels: per-flag precision/recall with the skills behind each error, pairwise clusters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.contracts.skill import Annotation, SkillRecord
from skillgym_ingest.errors import LabelsError
from skillgym_ingest.evaluation import load_labels, score


def record(name: str, *, network: bool = False, binaries: tuple[str, ...] = (), cluster: str | None = None,
           api_keys: tuple[str, ...] = ()) -> SkillRecord:
    runtime = {
        "network": Annotation(value={"required": network}),
        "gpu": Annotation(value={"required": False}),
        "external_binaries": Annotation(value=list(binaries)),
        "env_vars": Annotation(value={"names": list(api_keys), "api_keys": list(api_keys)}),
    }
    return SkillRecord(skill_id=f"id-{name}", name=name, source=f"corpus/{name}", content_hash="x", runtime=runtime,
                       duplicate_cluster=cluster or f"id-{name}")


def write_labels(tmp_path: Path, skills: dict[str, dict[str, object]], clusters: list[list[str]]) -> Path:
    path = tmp_path / "labels.json"
    defaults = {"network": False, "gpu": False, "credentials": False, "binaries": []}
    path.write_text(json.dumps({"skills": {n: {**defaults, **s} for n, s in skills.items()},
                                "duplicate_clusters": clusters}))
    return path


def test_flags_and_clusters_are_scored_with_their_errors(tmp_path: Path) -> None:
    labels = load_labels(write_labels(tmp_path, {
        "a": {"network": True, "binaries": ["gh"]}, "b": {"network": True}, "c": {}, "d": {},
    }, [["a", "b", "c"]]))
    records = [record("a", network=True, binaries=("gh", "jq")), record("b", cluster="id-a"),
               record("c", network=True, cluster="id-a"), record("d", cluster="id-a")]
    report = score(records, labels)
    network = report["flags"]["network"]
    assert (network["precision"], network["recall"]) == (0.5, 0.5)
    assert network["false_positives"] == ["c"] and network["false_negatives"] == ["b"]
    assert report["flags"]["binaries"]["false_positives"] == ["a:jq"]
    assert report["flags"]["credentials"]["precision"] == 1.0  # nothing predicted, nothing labelled
    clusters = report["duplicates"]
    assert (clusters["tp"], clusters["fp"], clusters["fn"]) == (3, 3, 0)
    assert clusters["false_pairs"] == [["a", "d"], ["b", "d"], ["c", "d"]]


def test_records_without_a_credentials_annotation_fall_back_to_api_key_variables(tmp_path: Path) -> None:
    labels = load_labels(write_labels(tmp_path, {"a": {"credentials": True}}, []))
    assert score([record("a", api_keys=("OPENAI_API_KEY",))], labels)["flags"]["credentials"]["recall"] == 1.0


def test_labels_must_match_the_records(tmp_path: Path) -> None:
    with pytest.raises(LabelsError, match="unlabelled"):
        load_labels(write_labels(tmp_path, {"a": {}}, [["a", "ghost"]]))
    with pytest.raises(LabelsError, match="not found"):
        score([record("a")], load_labels(write_labels(tmp_path, {"a": {}, "b": {}}, [])))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(LabelsError):
        load_labels(tmp_path / "bad.json")
