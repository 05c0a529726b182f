"""Candidates: a verified trajectory with everything curation filters and balances on."""

from __future__ import annotations

import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillgym_core import keys
from skillgym_core.archive import unpack_dir
from skillgym_core.contracts.atif import Trajectory, VerificationRecord
from skillgym_core.errors import ArtifactNotFound, SkillGymError
from skillgym_core.hidden_paths import hidden_paths_in
from skillgym_core.provenance import Source, trajectory_source
from skillgym_core.store.base import Store, get_json

from skillgym_trainer.errors import ExportError
from skillgym_trainer.export.chat import atif_to_chat


@dataclass(frozen=True)
class Candidate:
    trajectory_id: str
    task_id: str
    skill_id: str
    harness: str
    model: str
    prompt_variant: str
    category: str
    label: str
    reward: float
    passed: bool
    example: dict[str, Any] = field(repr=False)
    atif_key: str = ""
    part: int = 0
    source: Source = "model"
    hidden_paths: tuple[str, ...] = ()
    task_validated: bool = True

    @property
    def configuration(self) -> str:
        return f"{self.harness}/{self.model}"

    @property
    def example_id(self) -> str:
        return self.trajectory_id if self.part == 0 else f"{self.trajectory_id}#{self.part}"

    def row(self) -> dict[str, Any]:
        """The dataset record: the chat example labelled with where its turns came from."""
        return {**self.example, "source": self.source}

    def with_example(self, example: dict[str, Any], part: int = 0) -> Candidate:
        return replace(self, example=example, part=part)


@dataclass
class LoadReport:
    candidates: list[Candidate] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


def trajectory_ids(store: Store) -> list[str]:
    suffix = "/atif.json"
    return [key[len("trajectories/") : -len(suffix)] for key in store.list("trajectories/") if key.endswith(suffix)]


def _trainer_event(store: Store, trajectory_id: str) -> dict[str, Any]:
    key = f"state/trainer/examples/{trajectory_id}.json"
    return get_json(store, key)["event"] if store.exists(key) else {}


def _task_metadata(store: Store, task_id: str, cache: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Skill id, category and labels from the validation report or the task package."""
    if task_id in cache:
        return cache[task_id]
    meta: dict[str, Any] = {}
    if store.exists(keys.task_validation(task_id)):
        report = get_json(store, keys.task_validation(task_id))
        if isinstance(report, dict):
            meta.update({k: report[k] for k in ("label", "category", "skill_id") if report.get(k)})
    if store.exists(keys.task_package(task_id)) and not {"category", "skill_id"} <= meta.keys():
        with tempfile.TemporaryDirectory() as tmp:
            unpack_dir(store.get_bytes(keys.task_package(task_id)), Path(tmp))
            config_path = Path(tmp) / "task.toml"
            if config_path.is_file():
                metadata = tomllib.loads(config_path.read_text()).get("metadata", {})
                for name in ("category", "skill_id"):
                    if metadata.get(name) and name not in meta:
                        meta[name] = metadata[name]
                labels = metadata.get("labels") or []
                if "label" not in meta and labels:
                    meta["label"] = labels[0]
    cache[task_id] = meta
    return meta


def load_candidate(store: Store, trajectory_id: str, task_cache: dict[str, dict[str, Any]]) -> Candidate:
    atif_key = keys.trajectory_atif(trajectory_id)
    try:
        trajectory = Trajectory.model_validate_json(store.get_bytes(atif_key))
        record = VerificationRecord.model_validate(get_json(store, keys.trajectory_verification(trajectory_id)))
    except ArtifactNotFound:
        raise
    except ValueError as exc:
        raise ExportError("trajectory or verification record is invalid", key=atif_key, error=str(exc)) from exc
    event = _trainer_event(store, trajectory_id)
    meta = _task_metadata(store, record.task_id, task_cache)
    return Candidate(
        trajectory_id=trajectory_id,
        task_id=record.task_id,
        skill_id=event.get("skill_id") or meta.get("skill_id") or record.task_id,
        harness=record.harness,
        model=record.model,
        prompt_variant=record.prompt_variant,
        category=event.get("category") or meta.get("category") or "uncategorised",
        label=meta.get("label") or "unlabelled",
        reward=record.reward,
        passed=record.passed,
        example=atif_to_chat(trajectory),
        atif_key=atif_key,
        source=trajectory_source(trajectory, record.harness),
        hidden_paths=tuple(hidden_paths_in(trajectory.model_dump(mode="json", exclude_none=True))),
        task_validated=record.task_validated,
    )


def load_candidates(store: Store, ids: list[str] | None = None) -> LoadReport:
    """Load every trajectory (or ``ids``); a broken one is reported and the rest go on."""
    report = LoadReport()
    task_cache: dict[str, dict[str, Any]] = {}
    for trajectory_id in ids if ids is not None else trajectory_ids(store):
        try:
            report.candidates.append(load_candidate(store, trajectory_id, task_cache))
        except SkillGymError as exc:
            report.errors.append({"trajectory_id": trajectory_id, **exc.to_dict()})
    return report
