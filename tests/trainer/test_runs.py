"""Crash safety of the trainer: a run killed in the middle is resumed by the next trainer over
the same store, completed and announced once; redeliveries never train it again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from skillgym_core import keys
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.context import ServiceContext
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import read_event
from skillgym_core.contracts.events import Envelope, TrainingCompleted
from skillgym_core.errors import TransientError
from skillgym_core.service import Worker
from skillgym_core.store.base import get_json
from skillgym_trainer.runs import FAILURE_LIMIT, RunLedger, spec_from_dict, spec_to_dict
from skillgym_trainer.service import TrainerService
from skillgym_trainer.settings import TrainerSettings
from skillgym_trainer.sft.loop import SFTConfig, TrainResult
from skillgym_trainer.sft.run import LoraSpec, RunSpec, run_sft

from tests.trainer.factories import envelope, make_context, store_trajectory

GROUP = "skillgym-trainer"


class Killed(BaseException):
    """Stands for ``kill -9``: no handler, retry or dead letter sees it."""


def _settings(**overrides: Any) -> TrainerSettings:
    return TrainerSettings(max_steps=6, seq_len=2048, **overrides)


def killed_after_first_checkpoint(examples: Any, spec: Any, out_dir: Path, cache_dir: Path, **kwargs: Any) -> TrainResult:
    mirror: Callable[[Path], None] = kwargs.pop("on_checkpoint")

    def mirror_then_die(directory: Path) -> None:
        mirror(directory)
        raise Killed(directory.name)

    return run_sft(examples, spec, out_dir, cache_dir, on_checkpoint=mirror_then_die, **kwargs)


def killed_at_once(*args: Any, **kwargs: Any) -> TrainResult:
    raise Killed("before the first step")


def never_trains(*args: Any, **kwargs: Any) -> TrainResult:
    raise AssertionError("trained again")


def trainer(ctx: ServiceContext, settings: TrainerSettings, run_training: Callable[..., TrainResult]) -> TrainerService:
    service = TrainerService(ctx, settings)
    service.run_training = run_training
    return service


def publish(bus: MemoryBus, event: Envelope) -> None:
    bus.publish(event.type, event.key, event.to_bytes())


def completions(bus: MemoryBus) -> list[Envelope]:
    return [read_event(record) for record in bus.records(topics.TRAINING_COMPLETED)]


def test_a_run_killed_mid_training_resumes_from_its_checkpoint_and_completes_once(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    settings = _settings(min_new_examples=2, checkpoint_every=2)
    bus = MemoryBus()
    events = [envelope(store_trajectory(ctx.store, i)) for i in range(3)]  # type: ignore[arg-type]
    publish(bus, events[0])
    publish(bus, events[1])

    first = Worker(trainer(ctx, settings, killed_after_first_checkpoint), bus, ctx.store, group=GROUP)
    assert first.run_once(max_records=1) == 1
    with pytest.raises(Killed):
        first.run_once(max_records=1)
    (intent,) = RunLedger(ctx.store).open_runs()
    assert (intent.state, intent.attempts, intent.failures) == ("due", 1, 0)
    assert ctx.store.exists(keys.training_run(intent.run_id, "checkpoints/step-2/trainer_state.json"))
    assert completions(bus) == []

    # A fresh trainer over the same store: the uncommitted event comes again and resumes the run.
    second = Worker(trainer(ctx, settings, run_sft), bus, ctx.store, group=GROUP)
    assert second.run_once(max_records=1) == 1
    (announced,) = completions(bus)
    completed = announced.payload_as(TrainingCompleted)
    assert completed.run_id == intent.run_id and completed.examples == 2 and completed.steps == 6
    run_metrics = get_json(ctx.store, completed.metrics_key)
    assert [point["step"] for point in run_metrics["resumed_from"]] == [1, 2]
    assert [point["step"] for point in run_metrics["loss_curve"]] == [3, 4, 5, 6]
    assert ctx.store.exists(keys.training_run(intent.run_id, "checkpoint/model.safetensors"))
    assert list(ctx.store.list(keys.training_run(intent.run_id, "checkpoints/"))) == []
    ledger = RunLedger(ctx.store).get(intent.run_id)
    assert ledger is not None and (ledger.state, ledger.attempts, ledger.announced_by) == (
        "trained", 2, events[1].event_id
    )

    # The next event finds the announcement published and closes the run without training.
    publish(bus, events[2])
    second.service.run_training = never_trains  # type: ignore[attr-defined]
    assert second.run_once(max_records=1) == 1
    assert len(completions(bus)) == 1
    ledger = RunLedger(ctx.store).get(intent.run_id)
    assert ledger is not None and ledger.state == "announced"
    assert RunLedger(ctx.store).open_runs() == []


def test_a_run_killed_before_its_first_step_restarts_and_redeliveries_never_train_again(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    settings = _settings(min_new_examples=1, checkpoint_every=0)
    bus = MemoryBus()
    event = envelope(store_trajectory(ctx.store, 1))  # type: ignore[arg-type]
    publish(bus, event)

    with pytest.raises(Killed):
        Worker(trainer(ctx, settings, killed_at_once), bus, ctx.store, group=GROUP).run_once()
    assert TrainerService(ctx, settings).pending_ids() == ["traj-0001"]  # recorded, yet nothing trained

    Worker(trainer(ctx, settings, run_sft), bus, ctx.store, group=GROUP).run_once()
    (announced,) = completions(bus)
    assert announced.payload_as(TrainingCompleted).steps == 6

    # Redelivered to a worker (done marker: its outputs again, the same event) and to the service itself.
    Worker(trainer(ctx, settings, never_trains), bus, ctx.store, group="another-group").run_once()
    assert trainer(ctx, settings, never_trains).handle(event) == []
    assert {e.event_id for e in completions(bus)} == {announced.event_id}
    (run,) = RunLedger(ctx.store).runs()
    assert (run.state, run.attempts) == ("announced", 2)


def test_a_run_that_keeps_failing_is_given_up_without_blocking_later_events(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    bus = MemoryBus()
    calls: list[int] = []

    def broken(*args: Any, **kwargs: Any) -> TrainResult:
        calls.append(1)
        raise RuntimeError("out of memory")

    worker = Worker(trainer(ctx, _settings(min_new_examples=1), broken), bus, ctx.store, group=GROUP, backoff_s=0)
    publish(bus, envelope(store_trajectory(ctx.store, 1)))  # type: ignore[arg-type]
    worker.run_once()
    assert worker.stats.dead_lettered == 1 and len(calls) == FAILURE_LIMIT
    (failed,) = RunLedger(ctx.store).runs()
    assert (failed.state, failed.failures, failed.error) == ("failed", FAILURE_LIMIT, "RuntimeError: out of memory")

    worker.service.run_training = never_trains  # type: ignore[attr-defined]
    publish(bus, envelope(store_trajectory(ctx.store, 2, passed=False, reward=0.0)))  # type: ignore[arg-type]
    worker.run_once()
    assert worker.stats.dead_lettered == 1 and len(calls) == FAILURE_LIMIT


def test_a_dependency_that_is_down_is_no_failure_of_the_run(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)

    def store_down(*args: Any, **kwargs: Any) -> TrainResult:
        raise TransientError("store down", dependency="store")

    service = trainer(ctx, _settings(min_new_examples=1), store_down)
    event = envelope(store_trajectory(ctx.store, 1))  # type: ignore[arg-type]
    for _ in range(FAILURE_LIMIT + 1):
        with pytest.raises(TransientError):
            service.handle(event)
    (run,) = RunLedger(ctx.store).runs()
    assert (run.state, run.attempts, run.failures) == ("due", FAILURE_LIMIT + 1, 0)


def test_a_run_spec_survives_the_ledger() -> None:
    spec = RunSpec(base_model="m", sft=SFTConfig(max_steps=3, seed=7), lora=LoraSpec(r=4), deepspeed_config={"a": 1})
    assert spec_from_dict(spec_to_dict(spec)) == spec
    assert spec_from_dict(spec_to_dict(RunSpec())) == RunSpec()
