"""The two reference harnesses Harbor also has: ``oracle`` plays the task's reference solution
back as the steps an agent could have taken (see :mod:`.demonstration`), each one a bash tool
call run in the sandbox with its real output; ``nop`` does nothing (the verifier must then fail).

The solution directory is never mounted: whatever the demonstration needs from it is written by
one of its own steps. Commands share a working directory (``reference_workdir``) that persists
between them, as an agent's scratch files do."""

from __future__ import annotations

import time
from pathlib import Path

from skillgym_core.contracts.atif import ObservationResult, ToolCall
from skillgym_core.hidden_paths import hidden_paths_in
from skillgym_core.sandbox.base import Mount, SandboxResult
from skillgym_core.taskrun import AGENT_LOGS_MOUNT, SKILLS_MOUNT

from skillgym_sampler.harness.base import AgentEnv, AgentRun, RunSpec, format_observation
from skillgym_sampler.harness.demonstration import DemoStep, plan_demonstration
from skillgym_sampler.recorder import TrajectoryRecorder

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the task workspace.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}
DEFAULT_WORKDIR = "/tmp/work"


def skill_dirs(skills: Path | None) -> list[str]:
    if skills is None or not skills.is_dir():
        return []
    return sorted(p.parent.name for p in skills.glob("*/SKILL.md"))


class OracleHarness:
    name = "oracle"
    version = "2.0"

    def __init__(self, *, observation_max_chars: int = 10_000, workdir: str = DEFAULT_WORKDIR) -> None:
        self.observation_max_chars = observation_max_chars
        self.workdir = workdir

    def _run(self, env: AgentEnv, command: str, scratch: Path) -> SandboxResult:
        """One command of the demonstration, run as the validator runs the reference solution: the
        task's environment, its ``[solution] env``, ``/logs/agent`` and the task's limits."""
        mounts = [Mount(env.workspace, env.workdir, writable=True), Mount(scratch, self.workdir, writable=True),
                  Mount(env.runner.agent_logs(env.workspace), AGENT_LOGS_MOUNT, writable=True)]  # fmt: skip
        if env.skills_dir is not None:
            mounts.append(Mount(env.skills_dir, SKILLS_MOUNT))
        return env.runner.run_in_environment(env.task, ["bash", "-lc", command], mounts, None,
                                             env.task.config().agent.timeout_sec, phase="solution")  # fmt: skip

    def _record(self, recorder: TrajectoryRecorder, index: int, step: DemoStep, result: SandboxResult) -> None:
        call = ToolCall(tool_call_id=f"call_{index}", function_name="bash", arguments={"command": step.command})
        recorder.agent_step(
            step.message,
            tool_calls=[call],
            results=[
                ObservationResult(
                    source_call_id=call.tool_call_id, content=format_observation(result, self.observation_max_chars)
                )
            ],
            llm_call_count=0,
            extra={"kind": step.kind, "exit_code": result.exit_code, "outcome": result.outcome.value,
                   "duration_s": round(result.duration_s, 4)},
        )  # fmt: skip

    def run(self, env: AgentEnv, spec: RunSpec) -> AgentRun:
        recorder = TrajectoryRecorder(
            session_id=spec.trajectory_id,
            trajectory_id=spec.trajectory_id,
            agent_name=self.name,
            agent_version=self.version,
            model_name=None,
            tool_definitions=[BASH_TOOL],
        )
        recorder.user(env.instruction)
        if not (env.solution / "solve.sh").is_file():
            recorder.agent_step("The task has no reference solution.", llm_call_count=0)
            return AgentRun(recorder.build(), outcome="no_solution", error="solution/solve.sh is missing")
        demo = plan_demonstration(
            env.solution, skill_dirs=skill_dirs(env.skills_dir), skills_mount=SKILLS_MOUNT, workdir=self.workdir,
            task_workdir=env.workdir,
        )
        scratch = env.workspace.parent / f"{env.workspace.name}-work"
        scratch.mkdir(parents=True, exist_ok=True)
        outcome, error = "ok", None
        started = time.perf_counter()
        work = [s for s in demo.steps if s.kind in ("write", "run")]
        for index, step in enumerate(demo.steps, start=1):
            result = self._run(env, step.command, scratch)
            self._record(recorder, index, step, result)
            if not result.ok and step.kind in ("write", "run") and (demo.errexit or len(work) == 1):
                outcome, error = "command_failed", f"step {index} exited with {result.exit_code}"
                break
        for note in demo.notes:
            recorder.note(note)
        hidden = hidden_paths_in([s.command for s in demo.steps])
        if hidden:
            recorder.note(f"the solution names paths an agent cannot see: {', '.join(hidden)}")
        return AgentRun(
            recorder.build(final_extra={"agent_seconds": round(time.perf_counter() - started, 4)}),
            outcome=outcome,
            error=error,
        )


class NopHarness:
    name = "nop"
    version = "1.0"

    def run(self, env: AgentEnv, spec: RunSpec) -> AgentRun:
        recorder = TrajectoryRecorder(
            session_id=spec.trajectory_id,
            trajectory_id=spec.trajectory_id,
            agent_name=self.name,
            agent_version=self.version,
            model_name=None,
        )
        recorder.user(env.instruction)
        return AgentRun(recorder.build())
