"""The built-in agent against a server without a tool parser: the calls it writes as Hermes text
run in the sandbox, and each step records the format they were read from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.atif_validate import validate_trajectory
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.atif import Trajectory
from skillgym_core.contracts.events import TrajectoryVerified
from skillgym_sampler import SamplerService, SamplerSettings

from tests.sampler.tasks import SKILL_NAME, publish_task
from tests.support.scripted_llm import ScriptedLLMServer, Sequence, assistant

pytestmark = pytest.mark.integration


def hermes(command: str) -> dict[str, object]:
    call = json.dumps({"name": "bash", "arguments": {"command": command}})
    return assistant(f"Running a command.\n<tool_call>\n{call}\n</tool_call>")


def test_hermes_text_calls_solve_the_task_and_are_recorded(ctx: ServiceContext, tmp_path: Path) -> None:
    turns = [hermes(f"cat /skills/{SKILL_NAME}/SKILL.md"),
             hermes("awk -F, 'NR>1 {s+=$2} END {print s}' ledger.csv > total.txt && cat total.txt")]
    with ScriptedLLMServer(Sequence(turns, final="Wrote the total to total.txt.")) as server:
        settings = SamplerSettings(llm_base_url=server.base_url, harnesses=["builtin"],
                                   llm_tool_call_format="hermes")
        outputs = [o for o in SamplerService(ctx, settings).handle(publish_task(ctx, tmp_path))
                   if isinstance(o, TrajectoryVerified)]
    assert len(outputs) == 1 and outputs[0].passed
    raw = ctx.store.get_bytes(outputs[0].atif_key)
    assert validate_trajectory(raw).valid
    steps = Trajectory.model_validate_json(raw).steps
    called = [s for s in steps if s.tool_calls]
    assert [s.tool_calls[0].function_name for s in called] == ["bash", "bash"]  # type: ignore[index]
    assert all((s.extra or {}).get("tool_call_format") == "hermes" for s in called)
    assert all(s.message == "Running a command." for s in called)
