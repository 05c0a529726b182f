"""Token ids and log-probabilities read from the shapes servers answer in."""

from __future__ import annotations

from typing import Any

from skillgym_core.llm.tokens import TokenTrace, token_trace


def _answer(choice: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, **choice}], **top}


def test_openai_logprobs_alone() -> None:
    data = _answer({"logprobs": {"content": [{"token": "h", "logprob": -0.5}, {"token": "i", "logprob": 0}]}})
    assert token_trace(data) == TokenTrace(logprobs=[-0.5, 0.0])


def test_vllm_token_ids_with_logprobs() -> None:
    data = _answer({"token_ids": [7, 8], "logprobs": {"content": [{"logprob": -1.0}, {"logprob": -2.0}]}},
                   prompt_token_ids=[1, 2, 3])
    assert token_trace(data) == TokenTrace(prompt_token_ids=[1, 2, 3], completion_token_ids=[7, 8], logprobs=[-1.0, -2.0])


def test_ids_on_the_logprob_entries_as_llamacpp_and_serve_model_give_them() -> None:
    data = _answer({"logprobs": {"content": [{"id": 5, "token": "h", "logprob": -0.1},
                                             {"id": 6, "token": "i", "logprob": -0.2}]}})
    assert token_trace(data) == TokenTrace(completion_token_ids=[5, 6], logprobs=[-0.1, -0.2])


def test_nothing_or_wrong_values_are_left_out_not_recorded_wrong() -> None:
    assert token_trace(_answer({})) is None
    assert token_trace({"choices": "nope"}) is None
    mismatched = _answer({"token_ids": [7, 8, 9], "logprobs": {"content": [{"logprob": -1.0}]}})
    assert token_trace(mismatched) == TokenTrace(completion_token_ids=[7, 8, 9])
    garbage = _answer({"token_ids": ["7", True], "logprobs": {"content": [{"logprob": "low"}]}}, prompt_token_ids=[1.5])
    assert token_trace(garbage) is None
