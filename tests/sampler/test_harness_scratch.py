"""A harness removes the folders it mounted writable into the run, whatever the run left in them,
and the run's own failure is what the caller sees."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.llm import LLMSettings
from skillgym_core.sandbox.base import Mount, Outcome, SandboxResult
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.taskrun import TaskRunner
from skillgym_sampler.errors import HarnessError
from skillgym_sampler.harness.base import AgentEnv, RunSpec
from skillgym_sampler.harness.cli import ClaudeCodeHarness
from skillgym_sampler.harness.miniswe import MiniSweAgentHarness

from tests.sampler.tasks import write_task
from tests.support.trees import deep_tree

LLM = LLMSettings(base_url="http://127.0.0.1:9/v1", model="teacher")
SPEC = RunSpec(task_id="task-ledger0001", skill_id="skill-ledger", skill_name="ledger", harness="h", model="teacher")


class DeepWritingSandbox:
    """Leaves a deep tree in every writable mount but the workspace, and writes nothing else."""

    name = "deep-writer"

    def __init__(self, mounts_host_tools: bool) -> None:
        self.mounts_host_tools = mounts_host_tools

    def run(self, command: Sequence[str], *, mounts: Sequence[Mount], workdir: str = "/app", **_: Any) -> SandboxResult:
        for mount in mounts:
            if mount.writable and mount.target != workdir:
                deep_tree(Path(mount.host))
        return SandboxResult(Outcome.OK, 0, "", "", 0.0)


@pytest.mark.parametrize(
    "harness",
    [ClaudeCodeHarness(LLM, command="claude"), MiniSweAgentHarness(LLM)],
    ids=["cli", "mini-swe-agent"],
)
def test_folders_the_run_wrote_in_are_removed(
    harness: ClaudeCodeHarness | MiniSweAgentHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    task = write_task(tmp_path / "task")
    trial = tmp_path / "trial"
    workspace = trial / "workspace"
    workspace.mkdir(parents=True)
    sandbox = DeepWritingSandbox(mounts_host_tools=isinstance(harness, MiniSweAgentHarness))
    env = AgentEnv(task, workspace, TaskRunner(sandbox, environment=None), None)  # type: ignore[arg-type]
    try:
        with pytest.raises(HarnessError) as failed:
            harness.run(env, SPEC)
        assert failed.value.reason == "no_trajectory"
        assert list(scratch.iterdir()) == []
        assert [path.name for path in trial.iterdir()] == ["workspace"]
    finally:  # what is left is deeper than pytest's own removal of tmp_path can recurse
        remove_tree(scratch)
        remove_tree(trial)
