"""The two reference harnesses Harbor also has: ``oracle`` replays the task's reference solution as
bash tool calls, ``nop`` does nothing (the verifier must then fail)."""

from __future__ import annotations

import re
import time

from skillgym_core.contracts.atif import ObservationResult, ToolCall
from skillgym_core.contracts.task import AGENT_WORKDIR
from skillgym_core.envbuild import EnvironmentBuildError
from skillgym_core.sandbox.base import Limits, Mount, SandboxResult
from skillgym_core.taskrun import SKILLS_MOUNT, environment_failure

from skillgym_sampler.harness.base import AgentEnv, AgentRun, RunSpec, format_observation
from skillgym_sampler.harness.script_split import split_script
from skillgym_sampler.recorder import TrajectoryRecorder

SOLUTION_MOUNT = "/solution"
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
_SHELLS = re.compile(r"(?:^|/)(?:env\s+)?(?:ba)?sh\b")


class OracleHarness:
    name = "oracle"
    version = "1.0"

    def __init__(self, *, observation_max_chars: int = 10_000) -> None:
        self.observation_max_chars = observation_max_chars

    def _run(self, env: AgentEnv, command: str) -> SandboxResult:
        mounts = [Mount(env.workspace, AGENT_WORKDIR, writable=True), Mount(env.task.solution, SOLUTION_MOUNT)]
        if env.skills_dir is not None:
            mounts.append(Mount(env.skills_dir, SKILLS_MOUNT))
        config = env.task.config()
        limits = Limits(wall_s=config.agent.timeout_sec, memory_mb=config.environment.memory_mb or 2048)
        try:
            extra_mounts, run_env = env.runner.environment_extras(env.task)
        except EnvironmentBuildError as exc:
            return environment_failure(exc)
        return env.runner.sandbox.run(
            ["bash", "-lc", command], mounts=[*mounts, *extra_mounts], workdir=AGENT_WORKDIR, env=run_env, limits=limits
        )

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
        script_path = env.task.solution / "solve.sh"
        if not script_path.is_file():
            recorder.agent_step("The task has no reference solution.", llm_call_count=0)
            return AgentRun(recorder.build(), outcome="no_solution", error="solution/solve.sh is missing")
        text = script_path.read_text()
        shebang = text.splitlines()[0] if text.startswith("#!") else ""
        if shebang and not _SHELLS.search(shebang[2:].strip()):
            interpreter = shebang[2:].strip()
            plan = split_script("")
            plan.commands = []
            commands = [("Run the reference solution.", f"{interpreter} {SOLUTION_MOUNT}/solve.sh")]
        else:
            plan = split_script(text)
            commands = [(c.comment, plan.full_command(c)) for c in plan.commands]
        outcome, error = "ok", None
        started = time.perf_counter()
        for index, (comment, command) in enumerate(commands, start=1):
            call = ToolCall(tool_call_id=f"call_{index}", function_name="bash", arguments={"command": command})
            result = self._run(env, command)
            recorder.agent_step(
                comment or f"Step {index} of {len(commands)} of the reference solution.",
                tool_calls=[call],
                results=[
                    ObservationResult(
                        source_call_id=call.tool_call_id,
                        content=format_observation(result, self.observation_max_chars),
                    )
                ],
                llm_call_count=0,
                extra={"exit_code": result.exit_code, "outcome": result.outcome.value,
                       "duration_s": round(result.duration_s, 4)},
            )
            if not result.ok and (plan.errexit or len(commands) == 1):
                outcome, error = "command_failed", f"step {index} exited with {result.exit_code}"
                break
        recorder.note(f"reference solution split into {len(commands)} command(s)")
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
