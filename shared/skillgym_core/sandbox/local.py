"""The local sandbox: bubblewrap plus cgroup v1 (or rlimits where cgroups are unusable).

bwrap is forked straight into the run's cgroups (see :mod:`.cgroups`) and started with
``--info-fd``/``--block-fd``: once the namespaces exist it reports the host pid of the
sandbox's init and waits. We lower that pid's rlimits and set the CPU quota, then release
it, so the command starts inside every limit with no extra wrapper process. Killing the init (pid 1 of the sandbox's pid
namespace) makes the kernel kill every process in it, so nothing outlives a run.

The I/O loop of a started sandbox lives in :mod:`.runio`, the helpers that spawn bwrap under
the sandbox uid and reap its cgroups in :mod:`.spawn`."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skillgym_core.errors import SandboxError
from skillgym_core.metrics import SANDBOX_RUNS, SANDBOX_SECONDS
from skillgym_core.sandbox import bwrap, seccomp
from skillgym_core.sandbox.base import Limits, Mount, Outcome, RootMarker, SandboxResult
from skillgym_core.sandbox.cgroups import RunCgroup, available_controllers
from skillgym_core.sandbox.hostmounts import hand_over_tree, staged
from skillgym_core.sandbox.identity import SandboxIdentity, sandbox_identity
from skillgym_core.sandbox.protections import Protections, probe_protections, require
from skillgym_core.sandbox.runio import RunIO, read_info
from skillgym_core.sandbox.spawn import popen_user_args, prlimit_prefix, reap_cgroup

SIGNAL_EXIT_BASE = 128
SETUP_ALLOWANCE_S = 60.0


def _stderr_of(proc: subprocess.Popen[bytes]) -> str:
    assert proc.stderr is not None
    os.set_blocking(proc.stderr.fileno(), False)
    try:
        return (proc.stderr.read() or b"").decode(errors="replace").strip()[-2000:]
    except OSError:
        return ""


class LocalSandbox:
    """Runs commands under bubblewrap on this machine (see the module docstring)."""

    name = "local"

    def __init__(
        self,
        *,
        extra_ro_paths: Sequence[str] = (),
        use_cgroups: bool = True,
        uid: int | None = None,
        allow_unsafe: bool | None = None,
    ) -> None:
        """``uid``: the unprivileged host uid sandboxed code runs as (when this process is root;
        default ``SKILLGYM_SANDBOX_UID`` or 2000000). ``allow_unsafe`` (default
        ``SKILLGYM_SANDBOX_ALLOW_UNSAFE``) runs even where a mandatory protection is missing."""
        self.extra_ro = tuple(str(p) for p in extra_ro_paths)
        self.use_cgroups = use_cgroups
        self.identity: SandboxIdentity = sandbox_identity(uid)
        if allow_unsafe is None:
            allow_unsafe = os.environ.get("SKILLGYM_SANDBOX_ALLOW_UNSAFE", "").lower() in ("1", "true", "yes")
        self.allow_unsafe = allow_unsafe
        for outcome in Outcome:  # every outcome exported from the start, so shares read 0, not "no data"
            SANDBOX_RUNS.labels(self.name, outcome.value)

    @property
    def protections(self) -> Protections:
        return probe_protections(self.identity)

    def require_protections(self) -> None:
        """Raise :class:`~skillgym_core.sandbox.protections.SandboxUnsafeError` when a mandatory
        protection is missing (and no unsafe override was given)."""
        require(self.protections, allow_unsafe=self.allow_unsafe)

    @property
    def workspace_owner(self) -> tuple[int, int]:
        """Who must own a directory the sandbox writes to."""
        return self.identity.owner

    def controllers(self) -> dict[str, str]:
        return {k: str(v) for k, v in available_controllers().items()} if self.use_cgroups else {}

    def describe(self) -> dict[str, Any]:
        cg = self.controllers()
        protections = self.protections
        return {
            "backend": self.name,
            "bwrap": bwrap.bwrap_path(),
            "python": str(bwrap.python_prefix()),
            "cgroup_v1": cg,
            "enforcement": {
                "wall_s": "kill of the sandbox pid namespace",
                "memory": "cgroup_v1" if "memory" in cg else "rlimit_as",
                "pids": "cgroup_v1" if "pids" in cg else "none",
                "cpu_s": "cgroup_v1+rlimit_cpu" if "cpuacct" in cg else "rlimit_cpu",
                "cpus": "cgroup_v1" if "cpu" in cg else "none",
                "file_size": "rlimit_fsize",
                "output_bytes": "reader cap",
                "storage_mb": "tmpfs volume" if protections.workspace_volumes else "copy budget only",
            },
            "isolation": list(bwrap.NAMESPACE_FLAGS),
            "protections": {
                **protections.to_dict(),
                "seccomp_denied": list(seccomp.DENIED_SYSCALLS),
                "environment": "bwrap starts with an empty environment; the command gets an allow-list",
                "allow_unsafe": self.allow_unsafe,
            },
        }

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
        started = time.monotonic()
        try:
            if any(isinstance(m, RootMarker) for m in mounts):
                raise SandboxError("the run needs a container image (its task has a Dockerfile environment); "
                                   "the local sandbox runs on the host's slice, use the container sandbox",
                                   reason="image_environment")
            self.require_protections()
            result = self._run(command, mounts, workdir, env, limits, stdin, started)
        except (SandboxError, OSError) as exc:
            reason = exc.reason if isinstance(exc, SandboxError) else "os_error"
            result = SandboxResult(
                Outcome.SANDBOX_ERROR, None, "", str(exc), time.monotonic() - started, detail={"reason": reason}
            )
        SANDBOX_RUNS.labels(self.name, result.outcome.value).inc()
        SANDBOX_SECONDS.labels(self.name).observe(result.duration_s)
        return result

    def _rlimits(self, limits: Limits, cgroup: RunCgroup | None) -> list[tuple[int, tuple[int, int]]]:
        size = limits.file_size_mb * 1024 * 1024
        rlimits = [(resource.RLIMIT_CORE, (0, 0)), (resource.RLIMIT_FSIZE, (size, size))]
        if limits.cpu_s is not None:
            rlimits.append((resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1)))
        if cgroup is None or "memory" not in cgroup.paths:
            memory = limits.memory_mb * 1024 * 1024
            rlimits.append((resource.RLIMIT_AS, (memory, memory)))
        return rlimits

    def _run(
        self,
        command: Sequence[str],
        mounts: Sequence[Mount],
        workdir: str,
        env: Mapping[str, str] | None,
        limits: Limits,
        stdin: bytes | None,
        started: float,
    ) -> SandboxResult:
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        cgroup: RunCgroup | None = None
        proc: subprocess.Popen[bytes] | None = None
        identity = self.identity
        protections = self.protections
        hardening = bwrap.Hardening(user_namespace=protections.user_namespace, seccomp=protections.seccomp)
        for mount in mounts:
            if mount.writable:
                hand_over_tree(Path(mount.host), identity.owner)
        with staged(*identity.owner) as staging:
            invocation = bwrap.build_invocation(
                command, mounts=mounts, workdir=workdir, env=env, limits=limits, identity=identity,
                reach=staging.reach, pass_fds=("--info-fd", str(info_w), "--block-fd", str(block_r)),
                extra_ro=self.extra_ro, hardening=hardening,
            )  # fmt: skip
            try:
                if self.use_cgroups and available_controllers():
                    cgroup = RunCgroup.create(
                        memory_mb=limits.memory_mb, pids=limits.pids, cpu_quota=limits.cpus is not None
                    )
                with cgroup.spawning() if cgroup is not None else contextlib.nullcontext():
                    rlimits = self._rlimits(limits, cgroup)
                    proc = subprocess.Popen(
                        [*prlimit_prefix(rlimits, identity), *invocation.argv],
                        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        pass_fds=(info_w, block_r, *invocation.fds),
                        start_new_session=True,
                        env={},
                        **popen_user_args(identity),
                    )
                invocation.close()
                os.close(info_w)
                os.close(block_r)
                info_w = block_r = -1
                info = read_info(info_r, time.monotonic() + SETUP_ALLOWANCE_S)
                if info is None or "child-pid" not in info:
                    proc.kill()
                    _, err = proc.communicate()
                    why = err.decode(errors="replace").strip() or f"no namespace within {SETUP_ALLOWANCE_S:g} s"
                    raise SandboxError(f"bwrap did not start: {why}", reason="bwrap_failed")
                init_pid = int(info["child-pid"])
                if cgroup is not None and limits.cpus is not None:
                    cgroup.limit_cpus(limits.cpus)
                if not identity.switch:
                    for which, value in rlimits:
                        resource.prlimit(init_pid, which, value)
                try:
                    os.write(block_w, b"1")
                except BrokenPipeError:
                    proc.wait()
                    raise SandboxError(
                        f"bwrap exited during set-up: {_stderr_of(proc)}", reason="bwrap_failed"
                    ) from None
                # the wall clock is the command's: namespace and mount set-up on a loaded host is not its time
                deadline = time.monotonic() + limits.wall_s
                run = RunIO(proc, init_pid, limits, cgroup)
                run.pump(stdin, deadline)
                try:
                    proc.wait(max(0.01, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    run.stop(Outcome.TIMEOUT, limit="wall_s", wall_s=limits.wall_s)
                    proc.wait()
                survivors = reap_cgroup(cgroup)
                result = self._result(run, proc.returncode, time.monotonic() - started)
                if survivors:
                    result.outcome = Outcome.SANDBOX_ERROR
                    result.detail.update(reason="survivors", survivors=survivors)
                return result
            finally:
                invocation.close()
                # kill before closing the block fd: EOF on it would let a half-set-up sandbox run
                if proc is not None:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
                    for stream in (proc.stdin, proc.stdout, proc.stderr):
                        if stream is not None:
                            stream.close()
                for fd in (info_r, info_w, block_r, block_w):
                    if fd >= 0:
                        os.close(fd)
                if cgroup is not None:
                    cgroup.release()

    def _result(self, run: RunIO, returncode: int, duration: float) -> SandboxResult:
        detail = dict(run.detail)
        outcome = run.stopped_by
        if run.cgroup is not None:
            detail["cpu_seconds"] = run.cgroup.cpu_seconds()
            detail["peak_memory_bytes"] = run.cgroup.peak_memory_bytes()
            detail["pids_peak"] = run.cgroup.pids_peak()
            detail["pids_limit_hit"] = run.cgroup.pids_limit_hits() > 0
            if run.cgroup.oom_kills() and outcome in (None, Outcome.KILLED):
                outcome = Outcome.OOM
                detail["limit"] = "memory_mb"
        exit_code: int | None = returncode
        if outcome is None:
            outcome = Outcome.OK
            if returncode > SIGNAL_EXIT_BASE and returncode - SIGNAL_EXIT_BASE in (
                signal.SIGKILL, signal.SIGXCPU, signal.SIGXFSZ,
            ):  # fmt: skip
                outcome = Outcome.KILLED
                detail["signal"] = signal.Signals(returncode - SIGNAL_EXIT_BASE).name
        elif outcome in (Outcome.TIMEOUT, Outcome.OUTPUT_LIMIT):
            exit_code = None
        return SandboxResult(
            outcome=outcome,
            exit_code=exit_code,
            stdout=run.buffers["stdout"].decode(errors="replace"),
            stderr=run.buffers["stderr"].decode(errors="replace"),
            duration_s=duration,
            truncated=run.truncated,
            detail=detail,
        )
