"""Task environments as cached virtual environments, built on the host and mounted read-only.

The sandbox has no network, so dependencies are installed here, by the host's pip, into a
fresh ``python -m venv --without-pip`` made from the interpreter the sandbox exposes. Nothing a
package ships is executed on the host: pip takes wheels only (``--only-binary=:all:``, so no
build backend or ``setup.py`` runs), pip itself starts in the still-empty environment (no
``.pth`` file exists yet), and byte-compilation runs with ``-I -S`` (no ``site``, so no
``.pth`` line is executed). The tree is then relocated to its in-sandbox path (scripts and
compiled files name ``/opt/venv``) and published by an atomic rename.

Layout under the cache directory: ``envs/<key>/`` (complete environments, each holding
``skillgym-environment.json``), ``locks/<key>.lock``, ``tmp/`` (builds in progress) and
``logs/<key>.log`` (the last build log). The key hashes the normalised requirements, the
interpreter and the mount target, so equal declarations share one environment. A hit is one
``stat``; builds of one key are serialised by an ``flock`` on its lock file."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild.dockerparse import parse_dockerfile, pip_installs
from skillgym_core.envbuild.hostpackages import apt_packages, missing_on_host
from skillgym_core.envbuild.provider import ENV_MOUNT, EnvironmentBuildError, PreparedEnvironment
from skillgym_core.envbuild.requirements import Requirements, declared_requirements
from skillgym_core.errors import TaskFormatError
from skillgym_core.sandbox.bwrap import sandbox_env

MANIFEST = "skillgym-environment.json"
# read by every non-interactive bash through BASH_ENV: puts the environment back on PATH after
# a login shell's /etc/profile reset it (``bash -lc`` is how agent commands run)
ACTIVATE_SCRIPT = "skillgym-activate.sh"
ACTIVATE = """case ":$PATH:" in *":{target}/bin:"*) ;; *) PATH="{target}/bin:$PATH" ;; esac
export PATH VIRTUAL_ENV="{target}"
"""
LOG_TAIL_CHARS = 4000
LOCK_POLL_S = 0.05
# what pip may see of the host environment: proxies, certificates and pip's own settings
PASSED_ENV = (
    "PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
)  # fmt: skip


@dataclass(frozen=True)
class PipSource:
    """Where pip looks for wheels."""

    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    no_index: bool = False

    def args(self) -> list[str]:
        args = ["--no-index"] if self.no_index else []
        if self.index_url and not self.no_index:
            args += ["--index-url", self.index_url]
        for link in self.find_links:
            args += ["--find-links", str(link)]
        return args


def _pip_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key in PASSED_ENV or key.startswith("PIP_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _tail(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
    return ""


def relocate(venv: Path, target: str) -> None:
    """Rewrite the build path to ``target`` in the environment's scripts and ``pyvenv.cfg``."""
    old, new = str(venv).encode(), target.encode()
    for path in [*(venv / "bin").iterdir(), venv / "pyvenv.cfg"]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old in data:
            mode = path.stat().st_mode
            path.write_bytes(data.replace(old, new))
            path.chmod(mode)


def host_unsupported_instructions(task: TaskDir) -> list[str]:
    """What a task's Dockerfile does beyond what the local runtime reproduces. For a Harbor task
    (its base, the workdir and requirements installed with pip are reproduced): system packages,
    files copied into the image, variables, users. SkillGym's own tasks are written for both
    runtimes, so only the system packages their family declares and this host lacks."""
    dockerfile = task.root / "environment" / "Dockerfile"
    if not task.config_path.is_file():  # an environment prepared on its own (a render job's)
        return []
    try:
        config = task.config()
    except TaskFormatError:
        return []
    if not dockerfile.is_file():
        image = config.environment.docker_image
        return [f"docker_image: {image} (a prebuilt image)"] if image else []
    harbor = config.is_harbor
    instructions = parse_dockerfile(dockerfile.read_text(errors="replace"))
    if not harbor:
        missing = missing_on_host(apt_packages(instructions))
        return [f"system packages this host lacks: {', '.join(missing)}"] if missing else []
    unsupported = []
    for instruction in instructions:
        if instruction.keyword in ("FROM", "WORKDIR", "ARG", "LABEL", "CMD", "ENTRYPOINT", "EXPOSE"):
            continue
        installs = pip_installs(instruction.args) if instruction.keyword == "RUN" else []
        if installs and all(files for files, _ in installs):
            continue  # pip install -r requirements.txt: what the local builder installs too
        unsupported.append(f"line {instruction.line}: {instruction.keyword} {instruction.args[:60]}")
    return unsupported


class LocalVenvProvider:
    """:class:`~skillgym_core.envbuild.provider.EnvironmentProvider` backed by a venv cache."""

    name = "local-venv"

    def __init__(
        self,
        cache_dir: Path,
        *,
        source: PipSource | None = None,
        target: str = ENV_MOUNT,
        default_timeout_s: float = 600.0,
        python: str = sys.executable,
    ) -> None:
        self.cache_dir = Path(cache_dir).resolve()
        self.source = source or PipSource()
        self.target = target
        self.default_timeout_s = default_timeout_s
        self.python = python
        self.default_path = sandbox_env(None)["PATH"]

    def env_dir(self, key: str) -> Path:
        return self.cache_dir / "envs" / key

    def prepare(self, task: TaskDir, *, timeout_s: float | None = None) -> PreparedEnvironment | None:
        unsupported = host_unsupported_instructions(task)
        if unsupported:
            raise EnvironmentBuildError(
                "this task's Dockerfile does what a virtual environment on the host cannot (" + "; ".join(unsupported)
                + "); run it on the container sandbox (SKILLGYM_SANDBOX=container)",
                reason="needs_container", instructions=unsupported)
        requirements = declared_requirements(task)
        return None if requirements is None else self.ensure(requirements, timeout_s=timeout_s)

    def ensure(self, requirements: Requirements, *, timeout_s: float | None = None) -> PreparedEnvironment:
        """The environment for ``requirements``: from the cache, or built now (once per key)."""
        key = requirements.key(salt=self.target)
        final = self.env_dir(key)
        if (final / MANIFEST).is_file():
            return self._prepared(key, requirements, hit=True, seconds=0.0)
        for sub in ("envs", "locks", "tmp", "logs"):
            (self.cache_dir / sub).mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + (timeout_s or self.default_timeout_s)
        with self._lock(key, deadline):
            if (final / MANIFEST).is_file():
                return self._prepared(key, requirements, hit=True, seconds=0.0)
            started = time.monotonic()
            self._build(key, requirements, final, deadline)
            return self._prepared(key, requirements, hit=False, seconds=time.monotonic() - started)

    def _prepared(self, key: str, requirements: Requirements, *, hit: bool, seconds: float) -> PreparedEnvironment:
        return PreparedEnvironment(
            key=key, host_path=self.env_dir(key), target=self.target, default_path=self.default_path,
            cache_hit=hit, build_seconds=seconds, requirements=requirements.lines, activate_script=ACTIVATE_SCRIPT,
        )  # fmt: skip

    @contextlib.contextmanager
    def _lock(self, key: str, deadline: float) -> Iterator[None]:
        with (self.cache_dir / "locks" / f"{key}.lock").open("a+") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise EnvironmentBuildError(
                            "timed out waiting for another build of the same environment",
                            reason="build_lock_timeout", key=key,
                        ) from None  # fmt: skip
                    time.sleep(LOCK_POLL_S)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _build(self, key: str, requirements: Requirements, final: Path, deadline: float) -> None:
        tmp_root = self.cache_dir / "tmp"
        for stale in tmp_root.glob(f"{key}-*"):  # left by a crashed build; we hold the key's lock
            shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=tmp_root))
        venv = work / "venv"
        log_path = self.cache_dir / "logs" / f"{key}.log"
        started = time.monotonic()
        try:
            with log_path.open("w", encoding="utf-8") as log:
                log.write(f"# environment {key}\n{requirements.text()}")
                self._step(
                    "venv", [self.python, "-m", "venv", "--without-pip", str(venv)], log, deadline, key, log_path
                )
                (work / "requirements.txt").write_text(requirements.text())
                pip = [
                    self.python, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                    "--no-input", "--disable-pip-version-check", "--no-warn-script-location", "--no-compile",
                    "--only-binary=:all:", *self.source.args(), "-r", str(work / "requirements.txt"),
                ]  # fmt: skip
                self._step("pip", pip, log, deadline, key, log_path)
                relocate(venv, self.target)
                site = venv / "lib"
                compile_cmd = [
                    str(venv / "bin" / "python"), "-I", "-S", "-m", "compileall", "-q", "-j", "0",
                    "-s", str(venv), "-p", self.target, str(site),
                ]  # fmt: skip
                # exit status 1: some module did not compile (torch ships test files in newer
                # syntax); it stays uncompiled, as it would be unimportable anyway
                self._step("compile", compile_cmd, log, deadline, key, log_path, tolerated=(1,))
            manifest = {
                "key": key,
                "requirements": list(requirements.lines),
                "python": platform.python_version(),
                "target": self.target,
                "built_at": time.time(),
                "build_seconds": round(time.monotonic() - started, 3),
            }
            (venv / ACTIVATE_SCRIPT).write_text(ACTIVATE.format(target=self.target))
            (venv / MANIFEST).write_text(json.dumps(manifest, indent=2))
            if final.exists():
                shutil.rmtree(final)
            os.rename(venv, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _step(self, step: str, argv: Sequence[str], log: TextIO, deadline: float, key: str, log_path: Path,
              tolerated: tuple[int, ...] = ()) -> None:
        log.write(f"\n$ {' '.join(argv)}\n")
        log.flush()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EnvironmentBuildError(
                f"environment build timed out before {step}", reason="build_timeout", key=key, log_tail=_tail(log_path)
            )
        try:
            proc = subprocess.Popen(
                list(argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=_pip_env(), start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise EnvironmentBuildError(f"cannot start {step}: {exc}", reason=f"{step}_failed", key=key) from exc
        try:
            code = proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise EnvironmentBuildError(
                f"environment build timed out during {step}", reason="build_timeout", key=key, log_tail=_tail(log_path)
            ) from None
        if code != 0 and code not in tolerated:
            reason = "pip_failed" if step == "pip" else f"{step}_failed"
            raise EnvironmentBuildError(
                f"{step} exited {code} while building environment {key}",
                reason=reason,
                key=key,
                exit_code=code,
                log_tail=_tail(log_path),
                log_path=str(log_path),
            )
