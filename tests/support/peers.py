"""Another project's own client library, installed once into a virtual environment of its own
under ``~/.cache/skillgym/peers/`` (beside the test services, kept out of the project's environment, whose dependencies it would
otherwise change), to check SkillGym against it from a subprocess."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.support.services import SERVICES_DIR

PEERS_DIR = SERVICES_DIR.parent / "peers"


class PeerInstallError(RuntimeError):
    pass


def peer_python(name: str, packages: Sequence[str], *, no_deps: Sequence[str] = (), timeout_s: float = 900) -> Path:
    """The interpreter of the peer environment ``name`` holding ``packages`` (and ``no_deps``,
    installed without their declared dependencies), made on first use."""
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    home = PEERS_DIR / name
    python = home / "bin" / "python"
    with (PEERS_DIR / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (home / ".complete").is_file() and python.exists():  # not one whose base interpreter is gone
            return python
        staging = PEERS_DIR / f".{name}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        steps = [[sys.executable, "-m", "venv", str(staging)]]
        pip = [str(staging / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        if no_deps:
            steps.append([*pip, "--no-deps", *no_deps])
        steps.append([*pip, *packages])
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=timeout_s, check=False)
            if done.returncode != 0:
                raise PeerInstallError(f"{' '.join(step[:6])} ... failed:\n{done.stderr[-3000:]}")
        shutil.rmtree(home, ignore_errors=True)
        staging.rename(home)
        (home / ".complete").write_text("\n".join([*no_deps, *packages]) + "\n")
    return python
