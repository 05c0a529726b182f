"""The environment provider named in settings, shared by reviewer, validator and sampler so
every phase of a task runs with the same dependencies."""

from __future__ import annotations

from skillgym_core.envbuild.provider import EnvironmentProvider
from skillgym_core.envbuild.venv import LocalVenvProvider, PipSource
from skillgym_core.settings import CommonSettings


def environment_provider(settings: CommonSettings, sandbox_name: str) -> EnvironmentProvider | None:
    """The cached-venv builder for the local sandbox, the Dockerfile builder for the container
    sandbox, and for Kubernetes the build contexts the operator builds into the cluster's registry
    (when the cluster has one) and the prebuilt images Harbor tasks name."""
    if not settings.env_build or sandbox_name not in ("local", "container", "kubernetes"):
        return None
    if sandbox_name == "kubernetes":
        from skillgym_core.envbuild.cluster import ClusterImageProvider, PodWorkdirExporter
        from skillgym_core.sandbox.kubernetes import KubernetesSandbox
        from skillgym_core.store.factory import make_store

        return ClusterImageProvider(make_store(settings), build_images=settings.k8s_build_images,
                                    exporter=PodWorkdirExporter(KubernetesSandbox.from_environment))  # fmt: skip
    if sandbox_name == "container":
        from skillgym_core.envbuild.image import ImageProvider
        from skillgym_core.sandbox.container.engine import connect

        return ImageProvider(connect(settings.container_engine_url), run_uid=settings.sandbox_uid)
    source = PipSource(
        index_url=settings.env_index_url,
        find_links=tuple(settings.env_find_links),
        no_index=settings.env_no_index,
    )
    return LocalVenvProvider(settings.env_cache, source=source)
