from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core import keys
from skillgym_core.contracts.events import TrainingCompleted
from skillgym_core.errors import ContractError
from skillgym_core.store.base import get_json
from skillgym_trainer.service import TrainerService
from skillgym_trainer.settings import TrainerSettings
from transformers import AutoModelForCausalLM, AutoTokenizer

from tests.trainer.factories import envelope, make_context, store_trajectory


def _settings(**overrides: object) -> TrainerSettings:
    return TrainerSettings(max_steps=6, seq_len=2048, **overrides)  # type: ignore[arg-type]


def test_records_once_and_never_trains_by_default(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    service = TrainerService(ctx, _settings())
    event = envelope(store_trajectory(ctx.store, 1))  # type: ignore[arg-type]
    assert service.handle(event) == []
    assert service.handle(event) == []
    assert service.recorded_ids() == ["traj-0001"]
    failed = envelope(store_trajectory(ctx.store, 2, passed=False, reward=0.0))  # type: ignore[arg-type]
    assert service.handle(failed) == []
    assert service.recorded_ids() == ["traj-0001"]
    assert not list(ctx.store.list("training/"))


def test_threshold_triggers_training_and_checkpoint_loads(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    service = TrainerService(ctx, _settings(min_new_examples=4))
    outputs = [service.handle(envelope(store_trajectory(ctx.store, i))) for i in range(4)]  # type: ignore[arg-type]
    assert outputs[:3] == [[], [], []]
    (completed,) = outputs[3]
    assert isinstance(completed, TrainingCompleted)
    assert completed.examples == 4 and completed.steps == 6
    assert completed.loss_last < completed.loss_first
    assert service.pending_ids() == []

    lines = ctx.store.get_bytes(completed.dataset_key).decode().splitlines()
    assert len(lines) == 4 and "tool_calls" in json.loads(lines[0])["messages"][2]
    curve = get_json(ctx.store, completed.metrics_key)["loss_curve"]
    assert [point["step"] for point in curve] == list(range(1, 7))

    local = tmp_path / "ckpt"
    prefix = completed.checkpoint_key + "/"
    for key in ctx.store.list(prefix):
        target = local / key[len(prefix) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(ctx.store.get_bytes(key))
    model = AutoModelForCausalLM.from_pretrained(str(local))
    tokenizer = AutoTokenizer.from_pretrained(str(local))
    assert model.config.vocab_size == len(tokenizer)
    assert "<tool_call>" in tokenizer.chat_template


def test_train_now_is_idempotent_and_none_when_empty(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    service = TrainerService(ctx, _settings())
    assert service.train_now() is None
    for i in range(3):
        service.handle(envelope(store_trajectory(ctx.store, i)))  # type: ignore[arg-type]
    first = service.train_now()
    again = service.train_now()
    assert first is not None and again == first
    assert ctx.store.exists(keys.training_run(first.run_id, "checkpoint/model.safetensors"))


def test_invalid_atif_is_a_contract_error(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    payload = store_trajectory(ctx.store, 5)  # type: ignore[arg-type]
    ctx.store.put_bytes(payload.atif_key, b'{"session_id": "x"}')
    with pytest.raises(ContractError):
        TrainerService(ctx, _settings()).handle(envelope(payload))


def test_threshold_reads_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLGYM_TRAINER_MIN_NEW_EXAMPLES", "7")
    monkeypatch.setenv("SKILLGYM_STORE", "local")
    assert TrainerSettings().min_new_examples == 7
