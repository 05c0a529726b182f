"""The baseline agent: one OpenAI-compatible chat model with a single ``bash`` tool whose calls
run in the task's sandbox. It is a yardstick, not a product: a plain loop, no planning."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import StepSection, TaskDir, TaskStep
from skillgym_core.llm import ChatResponse, LLMClient, LLMError, ToolCallRequest, Usage
from skillgym_core.multistep import run_steps
from skillgym_core.sandbox.base import SandboxResult
from skillgym_core.taskrun import SKILLS_MOUNT, TaskRunner

from skillgym_validator.errors import BaselineEndpointError, BaselineEndpointUnavailable


def bash_tool(workdir: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": "bash",
            "description": f"Run a bash command in the task's working directory ({workdir}) and return its output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "the command to run"}},
                "required": ["command"],
            },
        },
    }


def system_prompt(workdir: str) -> str:
    return (f"You solve tasks in a Linux sandbox with no network. Your working directory is {workdir}. "
            "Use the bash tool to inspect files and make changes; answer without a tool call when done.")


SKILLS_HINT = (
    " Skills (folders with a SKILL.md describing how to do a kind of work) are available "
    f"read-only under {SKILLS_MOUNT}; read the relevant one before you start."
)
TOOL_OUTPUT_CHARS = 8000


@dataclass
class AgentRun:
    with_skill: bool
    passed: bool
    reward: float
    failure_type: str | None
    steps: int
    tool_calls: int
    seconds: float
    stop_reason: str
    transcript: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def to_dict(self, *, include_transcript: bool = False) -> dict[str, Any]:
        record: dict[str, Any] = {
            "with_skill": self.with_skill,
            "passed": self.passed,
            "reward": self.reward,
            "failure_type": self.failure_type,
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "seconds": round(self.seconds, 4),
            "stop_reason": self.stop_reason,
            "usage": self.usage.to_dict(),
        }
        if include_transcript:
            record["transcript"] = self.transcript
        return record


@dataclass
class _Loop:
    """What one run's conversations add up to."""

    steps: int = 0
    tool_calls: int = 0
    stop_reason: str = "max_steps"
    transcript: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


def _tool_output(result: SandboxResult) -> str:
    text = f"exit_code: {result.exit_code} ({result.outcome.value})\n{result.stdout}"
    if result.stderr:
        text += f"\n[stderr]\n{result.stderr}"
    return text[-TOOL_OUTPUT_CHARS:]


class BaselineAgent:
    """Drives the baseline model through the shared :class:`LLMClient` (retries with backoff,
    token accounting); an endpoint that still fails is a :class:`BaselineEndpointError`."""

    def __init__(self, client: LLMClient, runner: TaskRunner, *, max_steps: int = 20, step_timeout_s: float = 120):
        self.client = client
        self.runner = runner
        self.max_steps = max_steps
        self.step_timeout_s = step_timeout_s

    def _complete(self, messages: list[dict[str, Any]], workdir: str) -> ChatResponse:
        try:
            return self.client.chat(messages, tools=[bash_tool(workdir)])
        except LLMError as exc:
            error = BaselineEndpointUnavailable if exc.reason == "llm_unavailable" else BaselineEndpointError
            raise error(f"chat completion failed: {exc}", url=self.client.settings.base_url, llm_reason=exc.reason) from exc

    def _call(self, task: TaskDir, workspace: Path, call: ToolCallRequest, skills: Path | None) -> str:
        if call.name != "bash":
            return f"error: unknown tool {call.name[:100]!r}; the only tool is bash"
        if "command" not in call.arguments:
            return "error: arguments must be a JSON object with a string 'command'"
        command = call.arguments["command"]
        if not isinstance(command, str):
            return "error: 'command' must be a string"
        if "\x00" in command:  # no process can be given an argument holding a NUL byte
            return "error: 'command' must not contain NUL bytes"
        result = self.runner.run_agent_command(task, workspace, command, skills=skills, timeout_s=self.step_timeout_s)
        return _tool_output(result)

    def _converse(self, task: TaskDir, workspace: Path, instruction: str, skills: Path | None,
                  loop: _Loop) -> None:  # fmt: skip
        """One conversation on ``instruction`` (the task's, or one step's), up to ``max_steps`` turns."""
        workdir = self.runner.workdir(task)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt(workdir) + (SKILLS_HINT if skills is not None else "")},
            {"role": "user", "content": instruction},
        ]
        loop.transcript.extend(messages)
        loop.stop_reason = "max_steps"
        for _ in range(self.max_steps):
            response = self._complete(messages, workdir)
            loop.steps += 1
            loop.usage.add(response.usage)
            messages.append(response.assistant_message())
            loop.transcript.append(messages[-1])
            if not response.tool_calls:
                loop.stop_reason = "answered"
                return
            for call in response.tool_calls:
                loop.tool_calls += 1
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": self._call(task, workspace, call, skills)})
                loop.transcript.append(messages[-1])

    def attempt(self, task: TaskDir, scratch: Path, *, with_skill: bool) -> AgentRun:
        """One run of the model on the task; a multi-step task is one conversation per step, each
        on that step's instruction, graded as the validator grades the reference solution."""
        started = time.monotonic()
        skills = task.skills if with_skill and task.skills.is_dir() else None
        workspace = self.runner.fresh_workspace(task, scratch)
        loop = _Loop()
        try:
            if self.runner.config(task).is_multi_step:
                def act(step: TaskStep, config: StepSection) -> None:
                    self._converse(task, workspace, step.instruction(), skills, loop)

                verdict = run_steps(self.runner, task, workspace, act, scratch=scratch).verifier
            else:
                self._converse(task, workspace, task.instruction(), skills, loop)
                verdict = self.runner.verify(task, workspace)
        finally:
            self.runner.discard_workspace(workspace)
        return AgentRun(
            with_skill=with_skill,
            passed=verdict.passed,
            reward=verdict.reward,
            failure_type=verdict.failure_type,
            steps=loop.steps,
            tool_calls=loop.tool_calls,
            seconds=time.monotonic() - started,
            stop_reason=loop.stop_reason,
            transcript=loop.transcript,
            usage=loop.usage,
        )
