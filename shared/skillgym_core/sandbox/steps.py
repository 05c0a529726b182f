"""The step channel of a sandbox session: how a client and a warm sandbox pod exchange commands
through the store. Step ``n``'s request and reply are JSON objects under the session's channel
prefix; a ``stop`` object ends the session. Both sides import this module, so the layout has
one definition."""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


def request_key(channel: str, step: int) -> str:
    return f"{channel.rstrip('/')}/steps/{step:06d}/request.json"


def reply_key(channel: str, step: int) -> str:
    return f"{channel.rstrip('/')}/steps/{step:06d}/reply.json"


def stop_key(channel: str) -> str:
    return f"{channel.rstrip('/')}/stop"


def steps_prefix(channel: str) -> str:
    return f"{channel.rstrip('/')}/steps/"


def step_of(key: str) -> int | None:
    """The step number a request or reply key names, if it names one."""
    parts = key.rstrip("/").split("/")
    return int(parts[-2]) if len(parts) >= 2 and parts[-2].isdigit() else None


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StepRequest(_Message):
    command: str = Field(max_length=1_000_000)
    timeout_s: float = Field(alias="timeoutSeconds", gt=0)
    stdin_b64: str | None = Field(None, alias="stdinBase64")

    def stdin(self) -> bytes | None:
        return None if self.stdin_b64 is None else base64.b64decode(self.stdin_b64, validate=True)

    @classmethod
    def make(cls, command: str, timeout_s: float, stdin: bytes | None) -> StepRequest:
        encoded = None if stdin is None else base64.b64encode(stdin).decode()
        return cls(command=command, timeout_s=timeout_s, stdin_b64=encoded)

    def body(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


class StepReply(_Message):
    outcome: Literal["ok", "timeout", "error"]
    exit_code: int | None = Field(None, alias="exitCode")
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    duration_s: float = Field(0.0, alias="durationSeconds")
    message: str = ""

    def body(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)
