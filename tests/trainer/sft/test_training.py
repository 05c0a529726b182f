"""The loop, resume and LoRA on a tiny random model (fast)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prometheus_client import REGISTRY
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.sft.loop import SFTConfig, lr_factor
from skillgym_trainer.sft.run import LoraSpec, RunSpec, run_sft

from tests.trainer.factories import make_trajectory

EXAMPLES = [atif_to_chat(make_trajectory(i)) for i in range(8)]
HELD_OUT = [atif_to_chat(make_trajectory(i)) for i in range(40, 43)]


def test_schedule_warms_up_then_decays() -> None:
    factors = [lr_factor(step, 10, 0.2, "cosine") for step in range(10)]
    assert factors[0] < factors[1] <= 1.0
    assert factors[-1] < factors[3]


def test_loss_falls_on_held_out_and_metrics_are_exported(tmp_path: Path) -> None:
    spec = RunSpec(tokens_per_batch=512, sft=SFTConfig(max_steps=8, run_id="unit"))
    result = run_sft(EXAMPLES, spec, tmp_path / "out", tmp_path / "cache", eval_examples=HELD_OUT)
    assert result.loss_last < result.loss_first
    assert result.eval_loss_after is not None and result.eval_loss_before is not None
    assert result.eval_loss_after < result.eval_loss_before
    assert REGISTRY.get_sample_value("skillgym_train_loss", {"run_id": "unit"}) == result.loss_last
    assert (REGISTRY.get_sample_value("skillgym_train_tokens_per_second", {"run_id": "unit"}) or 0) > 0
    assert (tmp_path / "out" / "model.safetensors").is_file()


def test_resume_continues_the_same_curve(tmp_path: Path) -> None:
    base: dict[str, Any] = {"tokens_per_batch": 512, "checkpoint_every": 3}
    straight = run_sft(
        EXAMPLES,
        RunSpec(**base, sft=SFTConfig(max_steps=6)),
        tmp_path / "a",
        tmp_path / "cache",
    )
    first = run_sft(
        EXAMPLES,
        RunSpec(**base, sft=SFTConfig(max_steps=3)),
        tmp_path / "b",
        tmp_path / "cache",
    )
    assert not (tmp_path / "b" / "checkpoints").exists()  # the last step is the final model, not a checkpoint
    run_sft(EXAMPLES, RunSpec(**base, sft=SFTConfig(max_steps=6)), tmp_path / "c", tmp_path / "cache")
    assert (tmp_path / "c" / "checkpoints" / "step-3").is_dir()
    resumed = run_sft(
        EXAMPLES,
        RunSpec(**base, sft=SFTConfig(max_steps=6), resume=True),
        tmp_path / "c",
        tmp_path / "cache",
    )
    assert [s.step for s in resumed.steps] == [4, 5, 6]
    assert [round(s.loss, 4) for s in resumed.steps] == [round(s.loss, 4) for s in straight.steps[3:]]
    assert [round(s.loss, 4) for s in first.steps] == [round(s.loss, 4) for s in straight.steps[:3]]


def test_lora_trains_adapters_and_saves_a_merged_model(tmp_path: Path) -> None:
    spec = RunSpec(tokens_per_batch=512, lora=LoraSpec(r=4, alpha=8), sft=SFTConfig(max_steps=5, learning_rate=1e-2))
    result = run_sft(EXAMPLES, spec, tmp_path / "out", tmp_path / "cache")
    assert result.loss_last < result.loss_first
    assert not (tmp_path / "out" / "adapter_config.json").exists()
    assert (tmp_path / "out" / "model.safetensors").is_file()
