"""The environment a task's commands run in, beyond the bare sandbox: a Protocol so the task
runner does not care how it was built (a cached local virtual environment, an image, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SkillGymError
from skillgym_core.sandbox.base import Mount

ENV_MOUNT = "/opt/venv"


class EnvironmentBuildError(SkillGymError):
    """The task's environment could not be built; ``log_tail`` holds the end of the build log."""

    reason = "environment_build_failed"

    @property
    def log_tail(self) -> str:
        return str(self.details.get("log_tail", ""))


@dataclass(frozen=True)
class PreparedEnvironment:
    """A built environment: ``host_path`` is mounted read-only at ``target`` in every run."""

    key: str
    host_path: Path
    target: str = ENV_MOUNT
    default_path: str = "/usr/local/bin:/usr/bin:/bin"
    cache_hit: bool = True
    build_seconds: float = 0.0
    requirements: tuple[str, ...] = field(default_factory=tuple)
    activate_script: str | None = None  # relative to the environment root; becomes BASH_ENV

    def mounts(self) -> list[Mount]:
        return [Mount(self.host_path, self.target)]

    def export_workdir(self, path: str, dest: Path) -> bool:
        """Write what the environment itself holds at ``path`` (an image's files) into ``dest``;
        False when it holds nothing there (a virtual environment never does)."""
        return False

    def run_env(self, base: Mapping[str, str] | None) -> dict[str, str]:
        """``base`` with the environment's ``bin`` first on PATH (before the caller's PATH, if any),
        also for login shells, whose profile resets PATH (through ``BASH_ENV``)."""
        env = dict(base or {})
        env["PATH"] = f"{self.target}/bin:{env.get('PATH') or self.default_path}"
        env["VIRTUAL_ENV"] = self.target
        if self.activate_script and "BASH_ENV" not in env:
            env["BASH_ENV"] = f"{self.target}/{self.activate_script}"
        return env

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "target": self.target,
            "cache_hit": self.cache_hit,
            "build_seconds": round(self.build_seconds, 3),
            "requirements": list(self.requirements),
        }


@runtime_checkable
class EnvironmentProvider(Protocol):
    name: str

    def prepare(self, task: TaskDir, *, timeout_s: float | None = None) -> PreparedEnvironment | None:
        """The task's environment (built or taken from the cache), or None when the task needs none.

        Raises :class:`EnvironmentBuildError` (or its ``RequirementsError`` sibling) when it
        cannot be built."""
        ...
