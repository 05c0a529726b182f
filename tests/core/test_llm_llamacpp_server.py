"""The LLM paths against a third-party server: llama.cpp's (``llama-cpp-python``), serving the
SmolLM2-135M GGUF with its ``chatml-function-calling`` format under one alias per role. The
client reads its structured ``tool_calls``, continues a conversation after a tool result (the
shape llama.cpp accepts: no ``null`` content), sends each role's model name, and both agent
harnesses sample real trajectories from it in the sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.contracts.events import TrajectoryVerified
from skillgym_core.llm import LLMClient, LLMSettings
from skillgym_core.llm.roles import ROLES
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.local import LocalStore
from skillgym_sampler import SamplerService, SamplerSettings

from tests.sampler.tasks import publish_task
from tests.support.llama_server import LlamaServer, start_llama_server

pytestmark = [pytest.mark.slow, pytest.mark.deferred_service]

BASH = {"type": "function", "function": {
    "name": "bash", "description": "Run a shell command and return its output",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}
FORCE_BASH = {"type": "function", "function": {"name": "bash"}}
ASK = [{"role": "system", "content": "You operate a Linux machine through the bash tool."},
       {"role": "user", "content": "List the files in the current directory."}]


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with start_llama_server(tmp_path_factory.mktemp("llama"), aliases=ROLES) as server:
        yield server


def _client(server: LlamaServer, model: str = "teacher", **extra: Any) -> LLMClient:
    settings = {"max_retries": 1, "max_tokens": 64, **extra}
    return LLMClient(LLMSettings(base_url=server.base_url, model=model, **settings))


def test_a_forced_function_comes_back_as_native_tool_calls(llama: LlamaServer) -> None:
    response = _client(llama, tool_call_format="native").chat(ASK, tools=[BASH], tool_choice=FORCE_BASH)
    assert [call.name for call in response.tool_calls] == ["bash"], response.raw
    assert isinstance(response.tool_calls[0].arguments.get("command"), str)
    assert response.tool_call_format == "native"
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0


def test_a_conversation_goes_on_after_a_tool_result(llama: LlamaServer) -> None:
    client = _client(llama)
    first = client.chat(ASK, tools=[BASH], tool_choice=FORCE_BASH)
    call = first.tool_calls[0]
    turn = [*ASK, first.assistant_message(),
            {"role": "tool", "tool_call_id": call.id, "content": "data.csv\nREADME.md\n"}]  # fmt: skip
    assert turn[-2]["content"] is not None, "llama.cpp's server answers a null content with HTTP 500"
    second = client.chat(turn, tools=[BASH])
    assert second.raw["choices"][0]["finish_reason"] in ("stop", "length", "tool_calls")
    assert client.usage.calls == 2


def test_each_role_is_answered_under_its_own_name(llama: LlamaServer) -> None:
    for role in ROLES:
        response = _client(llama, model=role).chat([{"role": "user", "content": "Say hi."}])
        assert response.raw["model"] == role


def test_both_harnesses_sample_real_trajectories_from_llamacpp(tmp_path: Path, llama: LlamaServer) -> None:
    ctx = ServiceContext(store=LocalStore(tmp_path / "store"), sandbox=LocalSandbox(), scratch=tmp_path / "scratch")
    settings = SamplerSettings(llm_base_url=llama.base_url, llm_model="teacher", harnesses=["builtin", "mini-swe-agent"],
                               max_steps=3, miniswe_step_limit=3, llm_max_tokens=96, llm_max_retries=1)
    outputs = [o for o in SamplerService(ctx, settings).handle(publish_task(ctx, tmp_path))
               if isinstance(o, TrajectoryVerified)]
    assert sorted(o.harness for o in outputs) == ["builtin", "mini-swe-agent"]
    for verified in outputs:
        raw = ctx.store.get_bytes(verified.atif_key)
        assert validate_trajectory(raw).valid
        trajectory = Trajectory.model_validate_json(raw)
        assert (trajectory.agent.model_name or "").rsplit("/", 1)[-1] == "teacher"
        agent_steps = [step for step in trajectory.steps if step.source == "agent"]
        assert agent_steps, f"{verified.harness}: no step came from the model"
        assert verified.failure_type != "llm_unavailable", verified
