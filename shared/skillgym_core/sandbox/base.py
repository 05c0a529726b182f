"""The sandbox Protocol: run one command with a set of mounts under limits, get a typed result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


class Outcome(StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    OOM = "oom"
    KILLED = "killed"
    OUTPUT_LIMIT = "output_limit"
    SANDBOX_ERROR = "sandbox_error"


@dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int | None = None
    memory_mb: int = 1024
    pids: int = 256
    output_bytes: int = 1_000_000
    file_size_mb: int = 256
    cpus: float | None = None  # CPU bandwidth (cores), where the backend can enforce it
    storage_mb: int | None = None  # what the run may store (the task's storage_mb), where the backend caps disk


@dataclass(frozen=True)
class Mount:
    """``host`` appears at absolute path ``target`` inside the sandbox."""

    host: Path
    target: str
    writable: bool = False


@dataclass(frozen=True)
class RootMarker(Mount):
    """Not a mount: what the run's root filesystem is. A backend that cannot provide it refuses
    the run with a typed error."""

    host: Path = Path("/")
    target: str = "/"


@dataclass(frozen=True)
class ImageRoot(RootMarker):
    """The run's root filesystem is ``image`` (a container image): only backends that run
    containers accept it. ``network``: the task allows the network (Harbor's ``public`` or
    ``allowlist``); runs are offline otherwise."""

    image: str = ""
    network: bool = False


@dataclass(frozen=True)
class BuildContext(RootMarker):
    """The run's image is built from the task's environment, packed in the store at
    ``context_key`` (or from ``base_image`` alone): the Kubernetes backend has the operator build
    it (cached by what it is built from). ``user``: the image user the runs are to be, given the
    sandbox's uid in one more layer. ``network`` as for :class:`ImageRoot`."""

    context_key: str = ""
    base_image: str = ""
    user: str | None = None
    network: bool = False


@dataclass
class SandboxResult:
    outcome: Outcome
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    truncated: bool = False
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK and self.exit_code == 0


@runtime_checkable
class Sandbox(Protocol):
    name: str

    def run(
        self,
        command: Sequence[str],
        *,
        mounts: Sequence[Mount],
        workdir: str = "/app",
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        stdin: bytes | None = None,
    ) -> SandboxResult:
        """Run ``command`` with no network, a read-only host and only ``mounts`` writable."""
        ...

    def describe(self) -> dict[str, Any]: ...
