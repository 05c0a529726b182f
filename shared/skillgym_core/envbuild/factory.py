"""The environment provider named in settings, shared by reviewer, validator and sampler so
every phase of a task runs with the same dependencies."""

from __future__ import annotations

from skillgym_core.envbuild.provider import EnvironmentProvider
from skillgym_core.envbuild.venv import LocalVenvProvider, PipSource
from skillgym_core.settings import CommonSettings


def environment_provider(settings: CommonSettings, sandbox_name: str) -> EnvironmentProvider | None:
    """The cached-venv builder, for the local sandbox (other backends mount no host paths)."""
    if not settings.env_build or sandbox_name != "local":
        return None
    source = PipSource(
        index_url=settings.env_index_url,
        find_links=tuple(settings.env_find_links),
        no_index=settings.env_no_index,
    )
    return LocalVenvProvider(settings.env_cache, source=source)
