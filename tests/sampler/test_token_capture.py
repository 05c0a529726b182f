"""The built-in agent against the project's own model server with token capture on: each model
turn in the trajectory carries its prompt and completion token ids and the completion's
log-probabilities, in the served model's tokenizer, as an RL trainer reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.contracts.events import TrajectoryVerified
from skillgym_sampler import SamplerService, SamplerSettings

from skillgym.evaluate import served_model
from tests.sampler.tasks import publish_task

pytestmark = pytest.mark.slow


def _turns(ctx: ServiceContext, tmp_path: Path, url: str, capture: bool) -> list[object]:
    settings = SamplerSettings(llm_base_url=url, harnesses=["builtin"], llm_capture_tokens=capture, max_steps=2,
                               llm_max_tokens=24)
    task = publish_task(ctx, tmp_path / ("on" if capture else "off"), task_id=f"task-ledger000{int(capture)}")
    outputs = [o for o in SamplerService(ctx, settings).handle(task) if isinstance(o, TrajectoryVerified)]
    assert len(outputs) == 1
    steps = Trajectory.model_validate_json(ctx.store.get_bytes(outputs[0].atif_key)).steps
    return [s for s in steps if s.source == "agent"]


def test_each_model_turn_carries_its_token_ids_and_logprobs(ctx: ServiceContext, tmp_path: Path) -> None:
    from skillgym_trainer.commands import resolve_base_model
    from transformers import AutoTokenizer

    model_dir = Path(resolve_base_model("smollm2")[0])
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    with served_model(model_dir, max_new_tokens=24) as url:
        captured = _turns(ctx, tmp_path, url, capture=True)
        plain = _turns(ctx, tmp_path, url, capture=False)
    assert captured
    for step in captured:
        metrics = step.metrics  # type: ignore[attr-defined]
        assert metrics.prompt_token_ids and len(metrics.prompt_token_ids) == metrics.prompt_tokens
        assert metrics.completion_token_ids and len(metrics.completion_token_ids) == metrics.completion_tokens
        assert metrics.logprobs and len(metrics.logprobs) == len(metrics.completion_token_ids)
        assert all(value <= 0.0 for value in metrics.logprobs)
        # the prompt ids are the conversation as the served tokenizer templated it
        assert "<|im_start|>system" in tokenizer.decode(metrics.prompt_token_ids)
    assert all(step.metrics.completion_token_ids is None for step in plain)  # type: ignore[attr-defined]
