"""The curation pipeline and versioned publication of datasets in the store.

load -> filter -> exact dedup -> near dedup -> length limit -> per-task cap -> balance ->
split by skill. The dataset id is derived from the configuration and the chosen examples, so
rebuilding the same data yields the same id; each new id under a name gets the next version."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from skillgym_core import keys
from skillgym_core.ids import content_id
from skillgym_core.store.base import Store, get_json, put_json

from skillgym_trainer.curation.balance import GROUPERS, balance, cap_per_task
from skillgym_trainer.curation.card import rejected_by_reason, render_markdown, source_shares, split_stats
from skillgym_trainer.curation.dedup import remove_exact, remove_near
from skillgym_trainer.curation.filters import Filters
from skillgym_trainer.curation.hidden import HIDDEN_PATH_REFERENCE, reject_hidden_paths
from skillgym_trainer.curation.length import LengthMode, apply_length_limit
from skillgym_trainer.curation.records import Candidate, load_candidates
from skillgym_trainer.curation.split import split_by_skill
from skillgym_trainer.errors import DatasetError
from skillgym_trainer.export.formats import export_splits


class CurationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "skillgym-sft"
    filters: Filters = Field(default_factory=Filters)
    exact_dedup: bool = True
    near_dup_threshold: float | None = Field(0.9, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1, description="o200k tokens per example")
    length_mode: LengthMode = "truncate"
    max_per_task: int | None = Field(None, ge=1)
    balance_by: str | None = None
    balance_max_ratio: float = Field(2.0, ge=1.0)
    eval_fraction: float = Field(0.1, ge=0, lt=1)
    seed: int = 0
    formats: list[str] = Field(default_factory=lambda: ["chat"])

    def model_post_init(self, _: Any) -> None:
        if self.balance_by is not None and self.balance_by not in GROUPERS:
            raise DatasetError(f"cannot balance by {self.balance_by!r}; choose from {sorted(GROUPERS)}")


@dataclass
class CuratedDataset:
    train: list[Candidate]
    eval: list[Candidate]
    pipeline: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        return {"train": [c.row() for c in self.train], "eval": [c.row() for c in self.eval]}


def empty_curation_summary(pipeline: dict[str, Any]) -> str:
    rejected = rejected_by_reason(pipeline)
    removed = ", ".join(f"{reason} {count}" for reason, count in rejected.items())
    return f"{pipeline['loaded']} loaded" + (f"; removed: {removed}" if removed else "")


def curate(candidates: list[Candidate], config: CurationConfig) -> CuratedDataset:
    pipeline: dict[str, Any] = {"loaded": len(candidates)}
    visible, hidden = reject_hidden_paths(candidates)
    current, rejected = config.filters.apply(visible)
    pipeline["filtered"] = ({HIDDEN_PATH_REFERENCE: hidden["count"]} if hidden["count"] else {}) | rejected
    pipeline[HIDDEN_PATH_REFERENCE] = hidden
    if config.exact_dedup:
        current, pipeline["exact_duplicates"] = remove_exact(current)
    if config.near_dup_threshold is not None:
        current, pipeline["near_duplicates"] = remove_near(current, config.near_dup_threshold)
    current, length = apply_length_limit(current, config.max_tokens, config.length_mode)
    pipeline["length"] = length.to_dict()
    current, pipeline["task_cap"] = cap_per_task(current, config.max_per_task)
    current, pipeline["balance"] = balance(current, config.balance_by, config.balance_max_ratio, config.seed)
    if not current:
        raise DatasetError(
            f"no example is left after curation: {empty_curation_summary(pipeline)}",
            reason="empty_curation",
            pipeline=pipeline,
        )
    train, evaluation = split_by_skill(current, config.eval_fraction, config.seed)
    return CuratedDataset(train=train, eval=evaluation, pipeline=pipeline)


def _versions_key(name: str) -> str:
    return f"datasets/versions/{name}.json"


def _register_version(store: Store, name: str, dataset_id: str) -> int:
    key = _versions_key(name)
    versions: list[dict[str, Any]] = get_json(store, key) if store.exists(key) else []
    for entry in versions:
        if entry["dataset_id"] == dataset_id:
            return int(entry["version"])
    version = len(versions) + 1
    versions.append({"version": version, "dataset_id": dataset_id, "created": dt.datetime.now(dt.UTC).isoformat()})
    put_json(store, key, versions)
    return version


@dataclass
class PublishedDataset:
    dataset_id: str
    version: int
    card: dict[str, Any]
    keys: list[str]

    def key(self, name: str) -> str:
        return keys.dataset(self.dataset_id, name)


def build_dataset(store: Store, config: CurationConfig, *, out: Path | None = None) -> PublishedDataset:
    """Curate everything in ``store`` and publish it under ``datasets/<id>/``; also write the
    files to ``out`` when given."""
    loaded = load_candidates(store)
    if not loaded.candidates:
        raise DatasetError(
            f"no verified trajectory could be loaded from {store.describe()}"
            + (f" ({len(loaded.errors)} failed to load)" if loaded.errors else ""),
            reason="nothing_to_curate",
            load_errors=loaded.errors,
        )
    curated = curate(loaded.candidates, config)
    chosen = {
        split: sorted(c.example_id for c in group)
        for split, group in (("train", curated.train), ("eval", curated.eval))
    }
    config_json = config.model_dump_json(indent=2)
    dataset_id = content_id("ds", {"config": json.loads(config_json), "examples": chosen})
    version = _register_version(store, config.name, dataset_id)
    card = {
        "name": config.name,
        "version": version,
        "dataset_id": dataset_id,
        "source": store.describe(),
        "created": dt.datetime.now(dt.UTC).isoformat(),
        "pipeline": curated.pipeline,
        "load_errors": loaded.errors,
        "splits": {"train": split_stats(curated.train), "eval": split_stats(curated.eval)},
        "sources": source_shares([*curated.train, *curated.eval]),
        "eval_skills": sorted({c.skill_id for c in curated.eval}),
        "train_skills": sorted({c.skill_id for c in curated.train}),
        "examples": chosen,
        "formats": config.formats,
        "config_json": config_json,
    }
    workdir = Path(tempfile.mkdtemp(prefix="dataset-"))
    try:
        export_splits(
            curated.rows(),
            workdir,
            config.formats,
            atif_keys={"train": [c.atif_key for c in curated.train], "eval": [c.atif_key for c in curated.eval]},
            store=store,
        )
        (workdir / "card.json").write_text(json.dumps(card, indent=2, sort_keys=True, default=str))
        (workdir / "README.md").write_text(render_markdown(card))
        written = []
        for path in sorted(workdir.rglob("*")):
            if path.is_file():
                key = keys.dataset(dataset_id, path.relative_to(workdir).as_posix())
                store.put_bytes(key, path.read_bytes())
                written.append(key)
        if out is not None:
            shutil.copytree(workdir, out, dirs_exist_ok=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return PublishedDataset(dataset_id=dataset_id, version=version, card=card, keys=written)
