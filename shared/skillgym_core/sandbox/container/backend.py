"""The container sandbox: every run is a fresh container of the task's image (or a default base)
on a container engine (Docker, or Podman serving the Docker Engine API).

Each container runs as the sandbox's unprivileged uid with no capabilities, ``no-new-privileges``,
the engine's default seccomp profile, no network (unless the task's image environment allows it,
as a Harbor task may), a read-only root filesystem (only the run's
writable mounts and a private ``/tmp`` can be written), and the run's memory, pid, CPU and file
size limits. Nothing of the host is visible but the mounts the caller names."""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skillgym_core.errors import SandboxError
from skillgym_core.metrics import SANDBOX_RUNS, SANDBOX_SECONDS
from skillgym_core.sandbox.base import ImageRoot, Limits, Mount, Outcome, RootMarker, SandboxResult
from skillgym_core.sandbox.bwrap import UNTRUSTED_RUNNER, untrusted_runner_source
from skillgym_core.sandbox.container.engine import connect
from skillgym_core.sandbox.container.images import PYTHON_BASE
from skillgym_core.sandbox.container.oomwatch import OomWatch
from skillgym_core.sandbox.identity import DEFAULT_SANDBOX_UID
from skillgym_core.sandbox.owned_dirs import owned_dir

STDIN_TARGET = "/.skillgym-stdin"
KILLED_EXIT = 137
RUN_LABEL = "io.skillgym.sandbox-run"
# RLIMIT_NPROC counts every process of the uid on the host, all runs together: the per-run bound
# is the pids limit; this one only keeps an engine from asking for more than the host allows.
NPROC = 32768


def _host_config(api: Any, mounts: Sequence[Mount], limits: Limits, stdin_file: Path | None,
                 network: bool = False, runner: Path | None = None) -> Any:
    from docker.types import LogConfig, Ulimit

    binds = [f"{m.host}:{m.target}:{'rw' if m.writable else 'ro'}" for m in mounts if not isinstance(m, RootMarker)]
    if stdin_file is not None:
        binds.append(f"{stdin_file}:{STDIN_TARGET}:ro")
    if runner is not None:
        binds.append(f"{runner}:{UNTRUSTED_RUNNER}:ro")
    file_size = limits.file_size_mb * 1024 * 1024
    return api.create_host_config(
        binds=binds, network_mode=None if network else "none", read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
        tmpfs={"/tmp": f"rw,nosuid,nodev,size={min(limits.storage_mb or 512, 4096)}m,mode=1777"},
        mem_limit=f"{limits.memory_mb}m", memswap_limit=f"{limits.memory_mb}m", pids_limit=limits.pids,
        nano_cpus=int(limits.cpus * 1e9) if limits.cpus else None,
        ulimits=[Ulimit(name="fsize", soft=file_size, hard=file_size), Ulimit(name="nofile", soft=4096, hard=4096),
                 Ulimit(name="core", soft=0, hard=0), Ulimit(name="nproc", soft=NPROC, hard=NPROC)],
        log_config=LogConfig(type="k8s-file", config={"max-size": str(limits.output_bytes * 4 + 1024 * 1024)}),
    )  # fmt: skip


class _OutputReader(threading.Thread):
    """Follows a container's output as it is written and kills the container once stdout and
    stderr together pass ``cap`` bytes (what was read up to the cap is kept)."""

    def __init__(self, api: Any, ident: str, cap: int) -> None:
        super().__init__(daemon=True)
        self.api, self.container, self.cap = api, ident, cap
        self.stdout, self.stderr = bytearray(), bytearray()
        self.exceeded = False
        # attached before the container starts, so no output is written before anyone reads it
        self.stream = api.attach(ident, stdout=True, stderr=True, stream=True, logs=True, demux=True)

    def run(self) -> None:
        from docker.errors import DockerException

        try:
            for out, err in self.stream:
                for chunk, into in ((out, self.stdout), (err, self.stderr)):
                    if chunk:
                        into.extend(chunk[: max(0, self.cap - len(self.stdout) - len(self.stderr))])
                        if len(chunk) and len(self.stdout) + len(self.stderr) >= self.cap and not self.exceeded:
                            self.exceeded = True
                            with contextlib.suppress(DockerException):
                                self.api.kill(self.container)
        except (DockerException, OSError, ValueError):
            return


def _outcome(exit_code: int | None, *, timed_out: bool, truncated: bool, oom_killed: bool) -> Outcome:
    """As on the local sandbox: a run the sandbox ended itself is that; otherwise any process of
    the run killed for want of memory makes it an OOM, even one the command outlived."""
    if timed_out:
        return Outcome.TIMEOUT
    if truncated:
        return Outcome.OUTPUT_LIMIT
    if oom_killed:
        return Outcome.OOM
    return Outcome.KILLED if exit_code == KILLED_EXIT else Outcome.OK


class ContainerSandbox:
    """Runs commands in containers (see the module docstring)."""

    name = "container"
    # runs happen in the task's image: the host's interpreters and packages cannot be mounted in
    mounts_host_tools = False

    def __init__(self, client: Any = None, *, engine_url: str | None = None, uid: int = DEFAULT_SANDBOX_UID,
                 default_image: str = PYTHON_BASE) -> None:
        self.client = client if client is not None else connect(engine_url)
        self.uid = uid
        self.default_image = default_image
        components = self.client.version().get("Components") or [{}]
        self._libpod = str(components[0].get("Name", "")).startswith("Podman")
        for outcome in Outcome:
            SANDBOX_RUNS.labels(self.name, outcome.value)

    @property
    def workspace_owner(self) -> tuple[int, int]:
        """Who owns what runs write: the container user (rootful engines map it to the same host uid)."""
        return (self.uid, self.uid)

    def run(
        self,
        command: Sequence[str],
        *,
        mounts: Sequence[Mount],
        workdir: str = "/app",
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        stdin: bytes | None = None,
    ) -> SandboxResult:
        limits = limits or Limits()
        roots = [m for m in mounts if isinstance(m, ImageRoot)]
        image = roots[-1].image if roots else self.default_image
        network = bool(roots) and roots[-1].network
        started = time.monotonic()
        if any(isinstance(m, RootMarker) and not isinstance(m, ImageRoot) for m in mounts):
            return SandboxResult(Outcome.SANDBOX_ERROR, None, "", "the run's image is to be built by the cluster's "
                                 "operator; the container sandbox builds task images itself", 0.0,
                                 detail={"reason": "image_environment"})  # fmt: skip
        # below a directory of this process's: what a process killed mid-run left is swept by the next
        parent = owned_dir(Path(tempfile.gettempdir()), "skillgym-ctr-", mode=0o711)
        with tempfile.TemporaryDirectory(prefix="run-", dir=parent) as tmp:
            Path(tmp).chmod(0o755)
            # the confining runner a verifier uses on agent-written code, as on every sandbox
            runner = Path(tmp) / "run-untrusted"
            runner.write_bytes(untrusted_runner_source().read_bytes())
            runner.chmod(0o555)
            stdin_file = None
            argv = list(command)
            if stdin is not None:
                stdin_file = Path(tmp) / "stdin"
                stdin_file.write_bytes(stdin)
                stdin_file.chmod(0o644)
                argv = ["/bin/sh", "-c", f'exec "$@" < {STDIN_TARGET}', "sh", *argv]
            try:
                result = self._run(image, argv, mounts, workdir, env, limits, stdin_file, network, runner)
            except SandboxError as exc:
                result = SandboxResult(Outcome.SANDBOX_ERROR, None, "", str(exc), 0.0,
                                       detail={"reason": exc.reason, "image": image})
        result.duration_s = time.monotonic() - started
        SANDBOX_RUNS.labels(self.name, result.outcome.value).inc()
        SANDBOX_SECONDS.labels(self.name).observe(result.duration_s)
        return result

    def _run(self, image: str, argv: list[str], mounts: Sequence[Mount], workdir: str, env: Mapping[str, str] | None,
             limits: Limits, stdin_file: Path | None, network: bool, runner: Path | None = None) -> SandboxResult:
        from docker.errors import DockerException, ImageNotFound
        from requests.exceptions import ConnectionError as RequestsConnectionError
        from requests.exceptions import ReadTimeout

        api = self.client.api
        try:
            container = api.create_container(
                image, command=argv, user=f"{self.uid}:{self.uid}", working_dir=workdir,
                environment={"SKILLGYM_RUN_UNTRUSTED": UNTRUSTED_RUNNER, **(env or {})}, network_disabled=not network,
                labels={RUN_LABEL: "1"}, host_config=_host_config(api, mounts, limits, stdin_file, network, runner),
            )
        except ImageNotFound as exc:
            raise SandboxError(f"image {image} is not on the container engine", reason="image_missing",
                               image=image) from exc
        except DockerException as exc:
            raise SandboxError(f"the container could not be created: {exc}", reason="sandbox", image=image) from exc
        ident = container["Id"]
        timed_out = False
        watch: OomWatch | None = None
        try:
            reader = _OutputReader(api, ident, limits.output_bytes)
            if self._libpod:
                self._initialise(ident)
                watch = self._watch_memory(ident)
            api.start(ident)
            if not self._libpod:
                watch = self._watch_memory(ident)
            reader.start()
            try:
                exit_code: int | None = self._wait(ident, limits.wall_s)
            except (ReadTimeout, RequestsConnectionError):
                timed_out = True
                with contextlib.suppress(DockerException):
                    api.kill(ident)
                exit_code = self._wait(ident, 30)
            reader.join(10)
            stdout, stderr = bytes(reader.stdout), bytes(reader.stderr)
            oom_killed = watch is not None and watch.stop()
            if exit_code == KILLED_EXIT and not oom_killed:
                oom_killed = bool(api.inspect_container(ident).get("State", {}).get("OOMKilled"))
        except DockerException as exc:
            raise SandboxError(f"the container failed: {exc}", reason="sandbox", image=image) from exc
        finally:
            if watch is not None:
                watch.stop()
            with contextlib.suppress(DockerException):
                api.remove_container(ident, force=True, v=True)
        detail = {"image": image, "engine": "container", "network": network}
        outcome = _outcome(exit_code, timed_out=timed_out, truncated=reader.exceeded, oom_killed=oom_killed)
        if outcome is Outcome.OOM:
            detail["limit"] = "memory_mb"
        return SandboxResult(
            outcome=outcome, exit_code=exit_code,
            stdout=stdout.decode(errors="replace"), stderr=stderr.decode(errors="replace"),
            duration_s=0.0, truncated=reader.exceeded, detail=detail,
        )  # fmt: skip

    def _initialise(self, ident: str) -> None:
        """Podman creates the container's process, and with it the container's cgroup, before the
        command runs: what the command does is watched from its first instruction."""
        api = self.client.api
        api._raise_for_status(api.post(f"{api.base_url}/v4.0.0/libpod/containers/{ident}/init"))

    def _watch_memory(self, ident: str) -> OomWatch | None:
        pid = int(self.client.api.inspect_container(ident).get("State", {}).get("Pid") or 0)
        return OomWatch.of_container(pid, ident) if pid > 0 else None

    def _wait(self, ident: str, timeout_s: float) -> int:
        """The container's exit code. Podman's Docker-compatible wait polls every 250 ms; its own
        API takes a shorter interval, which is most of a short run's latency."""
        api = self.client.api
        if self._libpod:
            response = api.post(f"{api.base_url}/v4.0.0/libpod/containers/{ident}/wait",
                                params={"condition": "stopped", "interval": "10ms"}, timeout=timeout_s)
            api._raise_for_status(response)
            return int(response.text.strip())
        return int(api.wait(ident, timeout=timeout_s).get("StatusCode", -1))

    def describe(self) -> dict[str, Any]:
        version = self.client.version()
        return {"name": self.name, "engine": version.get("Components", [{}])[0].get("Name", "engine"),
                "version": version.get("Version"), "api": version.get("ApiVersion"), "uid": self.uid,
                "default_image": self.default_image}
