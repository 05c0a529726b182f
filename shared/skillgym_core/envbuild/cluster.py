"""Task environments on Kubernetes: the task's ``environment/`` (its Dockerfile and build context)
is packed into the store under its content hash, and every run of the task names that context;
the operator builds it once into the cluster's registry (Kaniko, cached by the same hash) and
runs the task's pods from the image. A Harbor task naming a prebuilt ``docker_image`` runs on that
image; a task with neither runs on the operator's default task image.

As on the container sandbox: a task that names its agent's user runs as that user of its image,
which the operator's build gives the sandbox's uid (root is never honoured); runs are offline
unless the task's network is ``public``; and a task without ``environment/workspace/`` starts
from the files its image holds at its workdir, copied out by one pod of the image
(:class:`PodWorkdirExporter`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild.image import HOST_ONLY_VARIABLES, task_run_as
from skillgym_core.envbuild.provider import EnvironmentBuildError, PreparedEnvironment
from skillgym_core.errors import StoreUnavailable
from skillgym_core.ids import sha256_hex
from skillgym_core.sandbox.base import BuildContext, ImageRoot, Limits, Mount, Outcome, Sandbox
from skillgym_core.store.base import Store

log = logging.getLogger(__name__)
# Mounts naming the image, the workdir in it, where its files are to go: whether it held any.
WorkdirExporter = Callable[[Sequence[Mount], str, Path], bool]
EXPORT_TARGET = "/skillgym-export"
# $1 the image's workdir, $2 the writable mount. cp -R as the sandbox user copies what that user may
# read, which is what a run of the task could see there.
EXPORT_SCRIPT = 'test -d "$1" || exit 3\ncd "$1" && cp -R . "$2"/'
NO_WORKDIR_EXIT = 3


class PodWorkdirExporter:
    """Copies an image's workdir out through one sandbox run of that image (a pod on Kubernetes)."""

    def __init__(self, sandbox: Callable[[], Sandbox], limits: Limits | None = None) -> None:
        self._sandbox_factory = sandbox
        self._sandbox: Sandbox | None = None
        self.limits = limits or Limits(wall_s=600.0, memory_mb=256, storage_mb=4096, file_size_mb=1024)

    def __call__(self, roots: Sequence[Mount], path: str, dest: Path) -> bool:
        if self._sandbox is None:
            self._sandbox = self._sandbox_factory()
        command = ["/bin/sh", "-c", EXPORT_SCRIPT, "export", path, EXPORT_TARGET]
        result = self._sandbox.run(command, mounts=[*roots, Mount(dest, EXPORT_TARGET, writable=True)], workdir="/",
                                   limits=self.limits)  # fmt: skip
        if result.outcome is Outcome.OK and result.exit_code == NO_WORKDIR_EXIT:
            return False
        if result.outcome is not Outcome.OK or (result.exit_code != 0 and "Permission denied" not in result.stderr):
            raise EnvironmentBuildError(f"the image's {path} could not be copied out: {result.outcome.value}, exit "
                                        f"{result.exit_code}: {result.stderr[-300:]}", reason="workspace_export_failed",
                                        log_tail=result.stderr[-2000:])  # fmt: skip
        if result.exit_code != 0:
            log.warning("the image's %s was copied out without the files the sandbox user may not read", path)
        return True


@dataclass(frozen=True)
class ClusterEnvironment(PreparedEnvironment):
    """A build context in the store (or a prebuilt base image given the task's user); the operator
    turns it into the runs' image."""

    context_key: str = ""
    base_image: str = ""
    user: str | None = None
    network: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)
    exporter: WorkdirExporter | None = field(default=None, compare=False, repr=False)

    def mounts(self) -> list[Mount]:
        if not self.context_key and self.user is None:
            return [ImageRoot(image=self.base_image, network=self.network)]
        return [BuildContext(context_key=self.context_key, base_image=self.base_image, user=self.user,
                             network=self.network)]  # fmt: skip

    def export_workdir(self, path: str, dest: Path) -> bool:
        return self.exporter is not None and self.exporter(self.mounts(), path, dest)

    def run_env(self, base: Mapping[str, str] | None) -> dict[str, str]:
        return {k: v for k, v in (base or {}).items() if k not in HOST_ONLY_VARIABLES}

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "context_key": self.context_key, "base_image": self.base_image,
                "user": self.user, "warnings": list(self.warnings)}  # fmt: skip


class ClusterImageProvider:
    """Publishes each task's build context to the store for the operator to build."""

    name = "cluster-image"

    def __init__(self, store: Store, *, build_images: bool = True, exporter: WorkdirExporter | None = None) -> None:
        self.store = store
        # off: no registry to build into; a task's Dockerfile is not built and its pods run on the
        # operator's default task image
        self.build_images = build_images
        self.exporter = exporter
        # every command of a task prepares its environment: a context unchanged since it was
        # published (same files, sizes and times) is not packed again
        self._published: dict[tuple[str, int], str] = {}

    def prepare(self, task: TaskDir, *, timeout_s: float | None = None) -> ClusterEnvironment | None:
        context = Path(task.root / "environment")
        config = task.config() if task.config_path.is_file() else None
        identity = task_run_as(config)
        network = config is not None and config.environment.network == "public"
        prebuilt = config.environment.docker_image if config is not None else None
        if self.build_images and (context / "Dockerfile").is_file():
            key, hit = self._publish(context)
            return ClusterEnvironment(key=key.rsplit("/", 1)[-1][:40], host_path=context, target="/", cache_hit=hit,
                                      context_key=key, user=identity.user, network=network,
                                      warnings=identity.warnings, exporter=self.exporter)  # fmt: skip
        if not prebuilt:
            return None
        warnings = identity.warnings
        user = identity.user if self.build_images else None
        if identity.user is not None and user is None:
            warnings += (f"the task's user {identity.user} is not honoured: this cluster builds no images, so "
                         "runs go as the sandbox's user",)  # fmt: skip
        # a prebuilt image, which the cluster's nodes pull as they pull any pod's; given the task's
        # user, one more layer (built by the operator) gives that user the sandbox's uid
        return ClusterEnvironment(key=sha256_hex(f"{prebuilt}\0{user or ''}".encode())[:40], host_path=context,
                                  target="/", base_image=prebuilt, user=user, network=network, warnings=warnings,
                                  exporter=self.exporter)  # fmt: skip

    def _publish(self, context: Path) -> tuple[str, bool]:
        """The store key of the packed ``context`` and whether it was there already."""
        signature = (str(context.resolve()), hash(tuple(sorted(
            (str(p.relative_to(context)), p.stat().st_size, p.stat().st_mtime_ns) for p in context.rglob("*")
            if p.is_file() and not p.is_symlink()))))
        key = self._published.get(signature)
        if key is not None:
            return key, True
        data = pack_dir(context)
        key = keys.sandbox_input(sha256_hex(data))
        try:
            if not self.store.exists(key):
                self.store.put_bytes(key, data, "application/gzip")
        except StoreUnavailable as exc:
            raise EnvironmentBuildError(f"the build context could not be stored: {exc}",
                                        reason="environment_store_unavailable") from exc  # fmt: skip
        self._published[signature] = key
        return key, False
