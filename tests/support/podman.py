"""Podman's Docker-compatible API service for the container sandbox tests: installed (with the local
base images) by ``scripts/install-containers.sh``, in the background by ``make test``."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.services import (
    SERVICES_DIR,
    ServiceStartError,
    _Service,
    _service_dir,
    _spawn,
    await_deferred_install,
)

CONTAINERS_CONF = SERVICES_DIR / "containers" / "containers.conf"


class PodmanService(_Service):
    """``podman system service`` on a unix socket of its own; ``url`` is what the SDK connects to."""

    name = "podman"

    @property
    def socket(self) -> Path:
        return self.workdir / "podman.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"


def engine_environment() -> dict[str, str]:
    return {"CONTAINERS_CONF": str(CONTAINERS_CONF)}


def start_podman(workdir: Path, timeout: float = 60.0) -> PodmanService:
    await_deferred_install("containers")
    podman = shutil.which("podman")
    if podman is None or not CONTAINERS_CONF.is_file():
        raise ServiceStartError("podman", "not installed: run scripts/install-containers.sh (as root)")
    if os.geteuid() != 0:
        raise ServiceStartError("podman", "the container engine runs as root here")
    # a short path: unix socket paths are limited to 108 bytes
    service_dir = Path(tempfile.mkdtemp(prefix="podman-")) if len(str(workdir)) > 60 else _service_dir(workdir, "podman")
    socket = service_dir / "podman.sock"
    process, log_path = _spawn("podman", service_dir, [podman, "system", "service", "--time=0", f"unix://{socket}"],
                               env=engine_environment())
    service = PodmanService(service_dir, process, log_path, 0)

    def ready() -> bool:
        from skillgym_core.sandbox.container.engine import connect

        if not socket.exists():
            return False
        connect(service.url, timeout_s=5).close()
        return True

    service._wait_ready(ready, timeout)
    return service


def podman_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The podman command line on the same storage (for what the tests check beside the API)."""
    return subprocess.run(["podman", *args], capture_output=True, text=True, env={**os.environ, **engine_environment()},
                          timeout=120)
