"""The container engine behind the container sandbox: anything that serves the Docker Engine API
(Docker, or Podman's ``podman system service``), reached through the ``docker`` SDK."""

from __future__ import annotations

import os
from typing import Any

from skillgym_core.errors import DependencyUnavailable

ENGINE_URL_ENV = "SKILLGYM_CONTAINER_ENGINE_URL"
# Podman's rootful API socket, then Docker's.
DEFAULT_SOCKETS = ("/run/podman/podman.sock", "/var/run/docker.sock")


class ContainerEngineUnavailable(DependencyUnavailable):
    """The engine's API could not be reached (not running, wrong URL, refused)."""

    reason = "container_engine_unavailable"

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message, dependency="container-engine", url=url)


def engine_url(explicit: str | None = None) -> str:
    """``explicit``, else ``SKILLGYM_CONTAINER_ENGINE_URL``, else the first engine socket present."""
    if explicit:
        return explicit
    if os.environ.get(ENGINE_URL_ENV):
        return os.environ[ENGINE_URL_ENV]
    for socket in DEFAULT_SOCKETS:
        if os.path.exists(socket):
            return f"unix://{socket}"
    return f"unix://{DEFAULT_SOCKETS[0]}"


def connect(url: str | None = None, *, timeout_s: float = 120.0) -> Any:
    """A ``docker.DockerClient`` on the engine at ``url`` that answered a ping."""
    import docker
    from docker.errors import DockerException

    where = engine_url(url)
    try:
        client = docker.DockerClient(base_url=where, timeout=int(timeout_s))
        client.ping()
    except (DockerException, OSError) as exc:
        raise ContainerEngineUnavailable(f"no container engine answers at {where}: {exc}", url=where) from exc
    return client
