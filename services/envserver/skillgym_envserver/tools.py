"""One tool call of an episode, checked and run in the episode's sandbox session. Nothing an agent
sends runs on the host: reads and writes are commands in the sandbox too, and a file body to write
reaches the command on its standard input, never as a path the host opens in the agent's tree."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from skillgym_core.rlenv.api import TOOL_NAMES
from skillgym_core.sandbox.base import Outcome, SandboxResult
from skillgym_core.sandbox.session import SandboxSession

REQUIRED = {"bash": ("command",), "read_file": ("path",), "write_file": ("path", "content")}


@dataclass(frozen=True)
class ToolOutcome:
    observation: str
    exit_code: int | None
    malformed: bool = False
    truncated: bool = False


@dataclass(frozen=True)
class ToolLimits:
    timeout_s: float
    max_observation_chars: int
    max_read_bytes: int
    max_write_bytes: int


def parse_call(tool: str, arguments: dict[str, Any] | str) -> dict[str, str] | str:
    """The call's string arguments, or why the call is malformed."""
    if tool not in TOOL_NAMES:
        return f"unknown tool {tool!r}; the tools are {', '.join(TOOL_NAMES)}"
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return f"arguments are not valid JSON: {exc}"
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object"
    wanted = REQUIRED[tool]
    missing = [name for name in wanted if name not in arguments]
    extra = sorted(set(arguments) - set(wanted))
    if missing or extra:
        parts = [f"missing {', '.join(missing)}" if missing else "", f"unexpected {', '.join(extra)}" if extra else ""]
        return f"{tool} takes {', '.join(wanted)}: " + "; ".join(p for p in parts if p)
    wrong = [name for name in wanted if not isinstance(arguments[name], str)]
    if wrong:
        return f"{', '.join(wrong)} must be text"
    return {name: arguments[name] for name in wanted}


def run_call(session: SandboxSession, tool: str, arguments: dict[str, Any] | str, limits: ToolLimits) -> ToolOutcome:
    parsed = parse_call(tool, arguments)
    if isinstance(parsed, str):
        return ToolOutcome(f"error: {parsed}", None, malformed=True)
    if tool == "bash":
        return _shown(session.run(parsed["command"], timeout_s=limits.timeout_s), limits)
    if tool == "read_file":
        command = f"head -c {limits.max_read_bytes + 1} -- {shlex.quote(parsed['path'])}"
        result = session.run(command, timeout_s=limits.timeout_s)
        if result.outcome is Outcome.OK and result.exit_code == 0:
            text = result.stdout
            cut = len(text.encode()) > limits.max_read_bytes
            body = text.encode()[: limits.max_read_bytes].decode(errors="replace") if cut else text
            return ToolOutcome(body, 0, truncated=cut)
        return _shown(result, limits)
    return _write(session, parsed["path"], parsed["content"], limits)


def _write(session: SandboxSession, path: str, content: str, limits: ToolLimits) -> ToolOutcome:
    body = content.encode()
    if len(body) > limits.max_write_bytes:
        return ToolOutcome(f"error: content is {len(body)} bytes; at most {limits.max_write_bytes} per write", None)
    target = shlex.quote(path)
    result = session.run(f'mkdir -p -- "$(dirname -- {target})" && cat > {target}', timeout_s=limits.timeout_s,
                         stdin=body)  # fmt: skip
    if result.outcome is Outcome.OK and result.exit_code == 0:
        return ToolOutcome(f"wrote {len(body)} bytes to {path}", 0)
    return _shown(result, limits)


def _shown(result: SandboxResult, limits: ToolLimits) -> ToolOutcome:
    text = result.stdout
    if result.stderr:
        text += ("\n" if text and not text.endswith("\n") else "") + result.stderr
    if result.outcome is Outcome.TIMEOUT:
        text += f"\n[the command ran past {limits.timeout_s:g} s and was stopped]"
    elif result.outcome is not Outcome.OK:
        text += f"\n[{result.outcome.value}]"
    text += f"\n[exit code {result.exit_code}]" if result.exit_code is not None else ""
    cut = len(text) > limits.max_observation_chars
    if cut:
        half = limits.max_observation_chars // 2
        text = text[:half] + "\n[... output cut ...]\n" + text[-half:]
    return ToolOutcome(text, result.exit_code, truncated=cut)
