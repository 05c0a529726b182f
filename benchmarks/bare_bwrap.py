"""The peer the sandbox benchmarks compare against: a plain ``timeout`` + ``prlimit`` + ``bwrap``
command line with the same read-only host slice and namespaces as the local sandbox, built
once and run as is, optionally with the user namespace under the sandbox uid and with the
seccomp filter, so the cost of each protection can be read off separately."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgym_core.sandbox import bwrap, seccomp
from skillgym_core.sandbox.base import Limits, Mount
from skillgym_core.sandbox.hostmounts import reach_persistently
from skillgym_core.sandbox.identity import INSIDE_UID, sandbox_identity


@dataclass
class BareChain:
    """``run()`` executes the chain; ``userns`` starts bwrap under the sandbox uid with a user
    namespace, ``seccomp`` adds the filter."""

    argv: list[str]
    userns: bool
    seccomp_fd: int | None = None
    popen: dict[str, Any] = field(default_factory=dict)

    def run(self) -> int:
        if self.seccomp_fd is not None:
            os.lseek(self.seccomp_fd, 0, os.SEEK_SET)
        fds = (self.seccomp_fd,) if self.seccomp_fd is not None else ()
        return subprocess.run(self.argv, capture_output=True, pass_fds=fds, **self.popen).returncode


def bare_chain(
    command: Sequence[str], mounts: Sequence[Mount], limits: Limits, *, userns: bool = False, with_seccomp: bool = False
) -> BareChain:
    executable = bwrap.bwrap_path()
    assert executable is not None, "bwrap is not installed"
    identity = sandbox_identity()
    args = [executable, *bwrap._system_binds()]
    for directory in bwrap.host_ro_sources(()):
        source = reach_persistently(Path(directory), identity.host_uid, identity.host_gid) if userns else directory
        args += ["--ro-bind", str(source), directory]
    args += ["--size", str(limits.file_size_mb << 20), "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    for mount in mounts:
        args += ["--bind" if mount.writable else "--ro-bind", str(Path(mount.host).resolve()), mount.target]
    args += ["--remount-ro", "/"]
    flags = [f for f in bwrap.NAMESPACE_FLAGS if userns or f not in ("--unshare-user", "--disable-userns")]
    args += flags
    if userns:
        args += ["--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID)]
    chain = BareChain([], userns)
    if with_seccomp:
        chain.seccomp_fd = seccomp.program_fd()
        args += ["--seccomp", str(chain.seccomp_fd)]
    args += ["--chdir", "/app", "--setenv", "PATH", f"{bwrap.python_prefix() / 'bin'}:{bwrap.DEFAULT_PATH}"]
    memory = limits.memory_mb << 20
    chain.argv = [
        "timeout", "-s", "KILL", str(limits.wall_s), "prlimit", f"--as={memory}", f"--fsize={limits.file_size_mb << 20}",
        "--core=0", *([f"--cpu={limits.cpu_s}"] if limits.cpu_s else []), "--", *args, "--", *command,
    ]  # fmt: skip
    if userns and identity.switch:
        chain.popen = {"user": identity.host_uid, "group": identity.host_gid, "extra_groups": [], "env": {}}
    return chain
