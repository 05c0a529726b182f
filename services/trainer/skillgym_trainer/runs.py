"""The trainer's run ledger: a durable record that a training run is due, written before the
run starts and advanced as it goes, so that a run interrupted by a crash is resumed by the next
event instead of being skipped for good.

A run moves ``due`` → ``trained`` → ``announced`` in this process, or ``due`` → ``submitted``
when a ``TrainingJob`` trains it (the job announces it); a run that raised ``FAILURE_LIMIT``
times is ``failed`` and no longer retried (a crash or a dependency that is down is no failure:
it only counts an attempt). ``announced_by`` names the event whose
handling carried ``training-completed``: the announcement counts once the worker recorded that
event as done, since from then on it publishes exactly those outputs, on a redelivery too."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from skillgym_core.store.base import Store, get_json, put_json

from skillgym_trainer.sft.loop import SFTConfig
from skillgym_trainer.sft.run import LoraSpec, RunSpec

RUNS = "state/trainer/runs"

RunState = Literal["due", "submitted", "trained", "announced", "failed"]
OPEN_STATES: tuple[RunState, ...] = ("due", "trained")
FAILURE_LIMIT = 3


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class RunIntent(BaseModel):
    model_config = ConfigDict(extra="ignore")

    run_id: str
    dataset_id: str
    dataset_key: str
    trajectory_ids: list[str]
    launcher: Literal["inprocess", "kubernetes"]
    spec: dict[str, Any] = Field(description="the RunSpec the run id was derived from")
    state: RunState = "due"
    attempts: int = Field(0, description="times training or submission started; more than one: resumed")
    failures: int = Field(0, description="attempts that raised")
    error: str | None = None
    announced_by: str | None = None
    created: dt.datetime = Field(default_factory=_now)
    updated: dt.datetime = Field(default_factory=_now)

    def run_spec(self) -> RunSpec:
        return spec_from_dict(self.spec)


def spec_to_dict(spec: RunSpec) -> dict[str, Any]:
    return asdict(spec)


def spec_from_dict(data: dict[str, Any]) -> RunSpec:
    lora = data.get("lora")
    return RunSpec(
        **{
            **data,
            "sft": SFTConfig(**data["sft"]),
            "lora": LoraSpec(**{**lora, "target_modules": tuple(lora["target_modules"])}) if lora else None,
        }
    )


class RunLedger:
    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def key(run_id: str) -> str:
        return f"{RUNS}/{run_id}.json"

    def get(self, run_id: str) -> RunIntent | None:
        key = self.key(run_id)
        return RunIntent.model_validate(get_json(self.store, key)) if self.store.exists(key) else None

    def save(self, intent: RunIntent, **changes: Any) -> RunIntent:
        updated = intent.model_copy(update={**changes, "updated": _now()})
        put_json(self.store, self.key(updated.run_id), updated.model_dump(mode="json"))
        return updated

    def runs(self) -> list[RunIntent]:
        """Every planned run, oldest first."""
        intents = [RunIntent.model_validate(get_json(self.store, key)) for key in self.store.list(f"{RUNS}/")]
        return sorted(intents, key=lambda intent: (intent.created, intent.run_id))

    def open_runs(self) -> list[RunIntent]:
        """Runs not finished yet, oldest first."""
        return [intent for intent in self.runs() if intent.state in OPEN_STATES]
