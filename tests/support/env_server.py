"""The environment server (``skillgym serve-env``) as a real process on a free loopback port,
serving the validated tasks of a local store; stopped by PID, restartable on the same state."""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

from tests.support.services import _Service, _service_dir, _spawn, free_port


class EnvServerProcess(_Service):
    name = "env-server"

    def __init__(self, workdir: Path, settings: dict[str, str], timeout: float) -> None:
        self.settings = settings
        self.timeout = timeout
        process, log_path = _spawn(self.name, workdir, self._argv(), settings)
        super().__init__(workdir, process, log_path, int(settings["SKILLGYM_ENVSERVER_PORT"]))
        self._wait_ready(self._ready, timeout)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def restart(self, *, hard: bool = False) -> None:
        """Stop the process (``hard``: SIGKILL, as a crash) and start a new one on the same state."""
        if hard and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.stop()
        self.process, self.log_path = _spawn(self.name, self.workdir, self._argv(), self.settings)
        super().__init__(self.workdir, self.process, self.log_path, self.port)
        self._wait_ready(self._ready, self.timeout)

    def _argv(self) -> list[str]:
        return [sys.executable, "-m", "skillgym.cli", "serve-env"]

    def _ready(self) -> bool:
        with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=5) as response:
            return int(response.status) == 200


def start_env_server(workdir: Path, store_root: Path, timeout: float = 60.0, **settings: object) -> EnvServerProcess:
    """Settings are ``EnvServerSettings`` field names (``max_open_episodes=2``), passed as
    ``SKILLGYM_ENVSERVER_*`` (or ``SKILLGYM_*`` for common ones given with that prefix)."""
    home = _service_dir(workdir, "env-server")
    env = {
        "SKILLGYM_STORE": "local",
        "SKILLGYM_STORE_ROOT": str(store_root),
        "SKILLGYM_ENV_CACHE": str(home / "env-cache"),
        "SKILLGYM_ENVSERVER_STATE_DIR": str(home / "state"),
        "SKILLGYM_ENVSERVER_PORT": str(free_port()),
        "SKILLGYM_ENVSERVER_HOST": "127.0.0.1",
    }
    for name, value in settings.items():
        key = name if name.startswith("SKILLGYM_") else f"SKILLGYM_ENVSERVER_{name.upper()}"
        env[key] = value if isinstance(value, str) else _encoded(value)
    return EnvServerProcess(home, env, timeout)


def _encoded(value: object) -> str:
    import json

    return json.dumps(value) if isinstance(value, list | tuple | dict | bool) else str(value)
