"""Task environments on Kubernetes: the task's ``environment/`` (its Dockerfile and build context)
is packed into the store under its content hash, and every run of the task names that context;
the operator builds it once into the cluster's registry (Kaniko, cached by the same hash) and
runs the task's pods from the image. A Harbor task naming a prebuilt ``docker_image`` runs on that
image; a task with neither runs on the operator's default task image."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild.image import HOST_ONLY_VARIABLES, ImageEnvironment
from skillgym_core.envbuild.provider import EnvironmentBuildError, PreparedEnvironment
from skillgym_core.errors import StoreUnavailable
from skillgym_core.ids import sha256_hex
from skillgym_core.sandbox.base import BuildContext, Mount
from skillgym_core.store.base import Store


@dataclass(frozen=True)
class ClusterEnvironment(PreparedEnvironment):
    """A build context in the store; the operator turns it into the runs' image."""

    context_key: str = ""

    def mounts(self) -> list[Mount]:
        return [BuildContext(context_key=self.context_key)]

    def run_env(self, base: Mapping[str, str] | None) -> dict[str, str]:
        return {k: v for k, v in (base or {}).items() if k not in HOST_ONLY_VARIABLES}

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "context_key": self.context_key}


class ClusterImageProvider:
    """Publishes each task's build context to the store for the operator to build."""

    name = "cluster-image"

    def __init__(self, store: Store, *, build_images: bool = True) -> None:
        self.store = store
        # off: no registry to build into; a task's Dockerfile is not built and its pods run on the
        # operator's default task image
        self.build_images = build_images
        # every command of a task prepares its environment: a context unchanged since it was
        # published (same files, sizes and times) is not packed again
        self._published: dict[tuple[str, int], str] = {}

    def prepare(self, task: TaskDir, *, timeout_s: float | None = None) -> ClusterEnvironment | ImageEnvironment | None:
        context = Path(task.root / "environment")
        if not self.build_images or not (context / "Dockerfile").is_file():
            prebuilt = task.config().environment.docker_image if task.config_path.is_file() else None
            # a prebuilt image: the cluster's nodes pull it as they pull any pod's
            return ImageEnvironment(key=prebuilt, host_path=context, target="/", cache_hit=True, build_seconds=0.0,
                                    image=prebuilt) if prebuilt else None
        signature = (str(context.resolve()), hash(tuple(sorted(
            (str(p.relative_to(context)), p.stat().st_size, p.stat().st_mtime_ns) for p in context.rglob("*")
            if p.is_file() and not p.is_symlink()))))
        key = self._published.get(signature)
        hit = key is not None
        if key is None:
            data = pack_dir(context)
            key = keys.sandbox_input(sha256_hex(data))
            try:
                if not self.store.exists(key):
                    self.store.put_bytes(key, data, "application/gzip")
            except StoreUnavailable as exc:
                raise EnvironmentBuildError(f"the build context could not be stored: {exc}",
                                            reason="environment_store_unavailable") from exc  # fmt: skip
            self._published[signature] = key
        return ClusterEnvironment(key=key.rsplit("/", 1)[-1][:40], host_path=context, target="/", cache_hit=hit,
                                  context_key=key)  # fmt: skip
