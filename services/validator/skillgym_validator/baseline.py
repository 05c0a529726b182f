"""The baseline agent: one OpenAI-compatible chat model with a single ``bash`` tool whose calls
run in the task's sandbox. It is a yardstick, not a product: a plain loop, no planning."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from skillgym_core.contracts.task import TaskDir
from skillgym_core.sandbox.base import SandboxResult
from skillgym_core.sandbox.janitor import discard_tree
from skillgym_core.taskrun import SKILLS_MOUNT, TaskRunner

from skillgym_validator.errors import BaselineEndpointError

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the task's working directory (/app) and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command to run"}},
            "required": ["command"],
        },
    },
}
SYSTEM_PROMPT = (
    "You solve tasks in a Linux sandbox with no network. Your working directory is /app. "
    "Use the bash tool to inspect files and make changes; answer without a tool call when done."
)
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
        }
        if include_transcript:
            record["transcript"] = self.transcript
        return record


def _tool_output(result: SandboxResult) -> str:
    text = f"exit_code: {result.exit_code} ({result.outcome.value})\n{result.stdout}"
    if result.stderr:
        text += f"\n[stderr]\n{result.stderr}"
    return text[-TOOL_OUTPUT_CHARS:]


class ChatClient:
    """POST ``{base_url}/chat/completions``; returns the first choice's message."""

    def __init__(
        self, base_url: str, model: str, *, api_key: str = "", timeout_s: float = 120.0, temperature: float = 0
    ):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.temperature = temperature
        self.http = httpx.Client(timeout=timeout_s, headers=headers)

    def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body = {
            "model": self.model,
            "messages": messages,
            "tools": [BASH_TOOL],
            "tool_choice": "auto",
            "temperature": self.temperature,
        }
        try:
            response = self.http.post(self.url, json=body)
            response.raise_for_status()
            message = response.json()["choices"][0]["message"]
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise BaselineEndpointError(f"chat completion failed: {exc}", url=self.url) from exc
        if not isinstance(message, dict):
            raise BaselineEndpointError("chat completion message is not an object", url=self.url)
        calls = message.get("tool_calls")
        if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
            raise BaselineEndpointError("chat completion tool_calls is not a list of objects", url=self.url)
        return message

    def close(self) -> None:
        self.http.close()


class BaselineAgent:
    def __init__(self, client: ChatClient, runner: TaskRunner, *, max_steps: int = 20, step_timeout_s: float = 120):
        self.client = client
        self.runner = runner
        self.max_steps = max_steps
        self.step_timeout_s = step_timeout_s

    def _call(self, task: TaskDir, workspace: Path, call: dict[str, Any], skills: Path | None) -> str:
        function = call.get("function") or {}
        name = function.get("name") if isinstance(function, dict) else None
        if name != "bash":
            return f"error: unknown tool {str(name)[:100]!r}; the only tool is bash"
        try:
            arguments = json.loads(function.get("arguments") or "{}")
            command = arguments["command"]
        except (ValueError, KeyError, TypeError, RecursionError):
            return "error: arguments must be a JSON object with a string 'command'"
        if not isinstance(command, str):
            return "error: 'command' must be a string"
        if "\x00" in command:  # no process can be given an argument holding a NUL byte
            return "error: 'command' must not contain NUL bytes"
        result = self.runner.run_agent_command(task, workspace, command, skills=skills, timeout_s=self.step_timeout_s)
        return _tool_output(result)

    def attempt(self, task: TaskDir, scratch: Path, *, with_skill: bool) -> AgentRun:
        started = time.monotonic()
        skills = task.skills if with_skill and task.skills.is_dir() else None
        system = SYSTEM_PROMPT + (SKILLS_HINT if skills is not None else "")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": task.instruction()},
        ]
        workspace = self.runner.fresh_workspace(task, scratch)
        steps = tool_calls = 0
        stop_reason = "max_steps"
        try:
            for _ in range(self.max_steps):
                message = self.client.complete(messages)
                steps += 1
                calls = message.get("tool_calls") or []
                messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
                if not calls:
                    stop_reason = "answered"
                    break
                for call in calls:
                    tool_calls += 1
                    output = self._call(task, workspace, call, skills)
                    messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": output})
            verdict = self.runner.verify(task, workspace)
        finally:
            discard_tree(workspace)
        return AgentRun(
            with_skill=with_skill,
            passed=verdict.passed,
            reward=verdict.reward,
            failure_type=verdict.failure_type,
            steps=steps,
            tool_calls=tool_calls,
            seconds=time.monotonic() - started,
            stop_reason=stop_reason,
            transcript=messages,
        )
