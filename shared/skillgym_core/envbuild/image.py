"""Task environments as container images: the task's ``environment/Dockerfile`` built on the
container engine (build-time network on), cached by content (see
:mod:`skillgym_core.sandbox.container.images`). A task without a Dockerfile runs on the
container sandbox's default base image; one that names a prebuilt ``docker_image`` runs on that
image (pulled when the engine lacks it).

Runs are offline unless the task's network is ``public``. An ``allowlist`` task runs offline too:
the engine cannot limit a container's egress to named hosts, and a run gets less network than it
asked for, never more.

A task that names its agent's (or verifier's) user runs as that user of its image, moved to the
sandbox's uid (:mod:`skillgym_core.sandbox.container.users`); root is never honoured."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.contracts.task import TaskConfig, TaskDir
from skillgym_core.envbuild.provider import EnvironmentBuildError, PreparedEnvironment
from skillgym_core.sandbox.base import ImageRoot, Mount
from skillgym_core.sandbox.container.images import ImageBuilder
from skillgym_core.sandbox.container.users import RunAs, run_as
from skillgym_core.sandbox.identity import DEFAULT_SANDBOX_UID

log = logging.getLogger(__name__)
# Variables the runner sets for the local sandbox's host slice; in a container the image's own win.
HOST_ONLY_VARIABLES = frozenset({"PATH", "VIRTUAL_ENV", "BASH_ENV"})


@dataclass(frozen=True)
class ImageEnvironment(PreparedEnvironment):
    """A built image: every run of the task starts a fresh container of it."""

    image: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)
    network: bool = False
    exporter: Callable[[str, str, Path], bool] | None = field(default=None, compare=False, repr=False)

    def mounts(self) -> list[Mount]:
        return [ImageRoot(image=self.image, network=self.network)]

    def export_workdir(self, path: str, dest: Path) -> bool:
        return self.exporter is not None and self.exporter(self.image, path, dest)

    def run_env(self, base: Mapping[str, str] | None) -> dict[str, str]:
        return {k: v for k, v in (base or {}).items() if k not in HOST_ONLY_VARIABLES}

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "image": self.image, "warnings": list(self.warnings)}


class ImageProvider:
    """Builds each task's Dockerfile into an image on the container engine."""

    name = "image"

    def __init__(self, client: Any, *, default_timeout_s: float = 600.0, run_uid: int = DEFAULT_SANDBOX_UID) -> None:
        self.builder = ImageBuilder(client)
        self.default_timeout_s = default_timeout_s
        self.run_uid = run_uid

    def prepare(self, task: TaskDir, *, timeout_s: float | None = None) -> ImageEnvironment | None:
        context = task.root / "environment"
        config = task.config() if task.config_path.is_file() else None
        timeout_s = timeout_s or self.default_timeout_s
        if (context / "Dockerfile").is_file():
            built = self.builder.ensure(Path(context), timeout_s=timeout_s)
        elif config is not None and config.environment.docker_image:
            built = self.builder.prebuilt(config.environment.docker_image)
        else:
            return None
        identity = task_run_as(config)
        if identity.user is not None:
            built = self.builder.as_user(built, identity.user, self.run_uid, timeout_s=timeout_s)
        warnings = (*built.warnings, *identity.warnings)
        for warning in () if built.cache_hit else warnings:
            log.warning("%s: %s", task.root.name, warning)
        return ImageEnvironment(
            key=built.tag, host_path=Path(context), target="/", cache_hit=built.cache_hit,
            build_seconds=built.build_seconds, image=built.tag, warnings=warnings,
            network=config is not None and config.environment.network == "public", exporter=self.builder.export,
        )  # fmt: skip


def task_run_as(config: TaskConfig | None) -> RunAs:
    """The image user the task's runs take; a name that is not a user name is a typed error."""
    if config is None:
        return RunAs(None)
    try:
        return run_as(config)
    except ValueError as exc:
        raise EnvironmentBuildError(f"[agent] or [verifier] user: {exc}", reason="task_user_invalid") from exc
