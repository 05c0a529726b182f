"""The student served over real HTTP on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.serve import ServeOptions, create_app
from skillgym_trainer.sft.loop import SFTConfig
from skillgym_trainer.sft.run import RunSpec, run_sft

from tests.trainer.factories import BASH_TOOL, make_trajectory


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("serve")
    examples = [atif_to_chat(make_trajectory(i)) for i in range(4)]
    run_sft(examples, RunSpec(tokens_per_batch=512, sft=SFTConfig(max_steps=2)), root / "model", root / "cache")
    return root / "model"


@contextmanager
def serving(model: Path, options: ServeOptions) -> Iterator[str]:
    port = _free_port()
    uv = uvicorn.Server(uvicorn.Config(create_app(model, options), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        yield url
    finally:
        uv.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def server(model_dir: Path) -> Iterator[str]:
    with serving(model_dir, ServeOptions(max_new_tokens=12)) as url:
        yield url


def test_models_endpoint(server: str) -> None:
    body = httpx.get(f"{server}/v1/models").json()
    assert body["data"][0]["id"] == "model"


def test_chat_completion_with_tools(server: str) -> None:
    request = {
        "model": "student",
        "messages": [
            {"role": "system", "content": "You are a careful terminal agent."},
            {"role": "user", "content": [{"type": "text", "text": "Produce report.csv"}]},
        ],
        "tools": [BASH_TOOL],
        "max_tokens": 6,
    }
    response = httpx.post(f"{server}/v1/chat/completions", json=request, timeout=60)
    assert response.status_code == 200
    body = response.json()
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant"
    assert choice["finish_reason"] in {"stop", "length", "tool_calls"}
    assert 0 < body["usage"]["completion_tokens"] <= 6
    assert body["usage"]["prompt_tokens"] > 10
    assert body["model"] == "student"


def test_bad_requests_are_rejected(server: str) -> None:
    assert httpx.post(f"{server}/v1/chat/completions", json={"messages": []}).status_code == 400
    assert httpx.post(f"{server}/v1/chat/completions", json={"nothing": 1}).status_code == 422


def test_served_names_refuse_other_models_and_metrics_count_per_name(model_dir: Path) -> None:
    options = ServeOptions(max_new_tokens=4, served_names=("teacher", "baseline"), tool_parser="none")
    with serving(model_dir, options) as url:
        assert [m["id"] for m in httpx.get(f"{url}/v1/models").json()["data"]] == ["teacher", "baseline"]
        asked = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
        for name in ("teacher", "teacher", "baseline"):
            assert httpx.post(f"{url}/v1/chat/completions", json={**asked, "model": name}, timeout=60).status_code == 200
        refused = httpx.post(f"{url}/v1/chat/completions", json={**asked, "model": "default"}, timeout=60)
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "model_not_found"
        metrics = httpx.get(f"{url}/metrics").text
    assert 'skillgym_model_requests_total{model="teacher",outcome="ok"} 2.0' in metrics
    assert 'skillgym_model_requests_total{model="baseline",outcome="ok"} 1.0' in metrics
    assert 'skillgym_model_requests_total{model="default",outcome="model_not_found"} 1.0' in metrics
    assert 'skillgym_model_tokens_total{kind="completion",model="baseline"}' in metrics


def test_token_ids_and_logprobs_of_a_turn_in_the_models_tokenizer(server: str, model_dir: Path) -> None:
    from skillgym_trainer.sft.models import load_pretrained

    request = {"messages": [{"role": "user", "content": "List the files."}], "tools": [BASH_TOOL], "max_tokens": 8,
               "logprobs": True, "return_token_ids": True}
    body = httpx.post(f"{server}/v1/chat/completions", json=request, timeout=60).json()
    choice = body["choices"][0]
    completion, prompt = choice["token_ids"], body["prompt_token_ids"]
    assert len(prompt) == body["usage"]["prompt_tokens"] and len(completion) == body["usage"]["completion_tokens"]
    entries = choice["logprobs"]["content"]
    assert [entry["id"] for entry in entries] == completion
    assert all(entry["logprob"] <= 0.0 for entry in entries)
    model, tokenizer = load_pretrained(model_dir)
    # the ids are the served model's own: re-scoring them gives the same log-probabilities
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([prompt + completion])).logits[0].float()
    rescored = [float(torch.log_softmax(logits[len(prompt) - 1 + i], dim=-1)[token]) for i, token in enumerate(completion)]
    assert rescored == pytest.approx([entry["logprob"] for entry in entries], abs=1e-3)
    assert tokenizer.decode(completion, skip_special_tokens=False).startswith(
        "".join(entry["token"] for entry in entries)[:5])
    plain = httpx.post(f"{server}/v1/chat/completions", json={**request, "logprobs": False, "return_token_ids": False},
                       timeout=60).json()
    assert "prompt_token_ids" not in plain and "logprobs" not in plain["choices"][0]
