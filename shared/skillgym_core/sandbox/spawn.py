"""Helpers for starting bwrap under the sandbox's identity and limits, and for making sure
nothing a run started outlives it.

Where this process switches to the sandbox uid, bwrap is started under that uid behind a
``prlimit`` that lowers its rlimits first; otherwise the caller lowers the sandbox init's
rlimits itself (see :mod:`.local`)."""

from __future__ import annotations

import os
import resource
import shutil
import time
from typing import Any

from skillgym_core.errors import SandboxError
from skillgym_core.sandbox.cgroups import RunCgroup
from skillgym_core.sandbox.identity import SandboxIdentity


def popen_user_args(identity: SandboxIdentity) -> dict[str, Any]:
    """Popen arguments that start bwrap under the sandbox uid (never as root)."""
    if not identity.switch:
        return {}
    return {"user": identity.host_uid, "group": identity.host_gid, "extra_groups": []}


RLIMIT_FLAGS = {
    resource.RLIMIT_CORE: "--core", resource.RLIMIT_FSIZE: "--fsize",
    resource.RLIMIT_CPU: "--cpu", resource.RLIMIT_AS: "--as",
}  # fmt: skip


def prlimit_prefix(rlimits: list[tuple[int, tuple[int, int]]], identity: SandboxIdentity) -> list[str]:
    """A ``prlimit`` prefix that lowers the limits before bwrap starts. Needed when bwrap runs
    under another uid: changing another user's limits takes CAP_SYS_RESOURCE, which a root
    in a container often lacks; a process may always lower its own."""
    if not identity.switch:
        return []
    executable = shutil.which("prlimit")
    if executable is None:
        raise SandboxError("util-linux prlimit is not installed", reason="prlimit_missing")
    return [executable, *(f"{RLIMIT_FLAGS[which]}={soft}:{hard}" for which, (soft, hard) in rlimits), "--"]


def reap_cgroup(cgroup: RunCgroup | None, timeout_s: float = 2.0) -> int:
    """Kill whatever is left in the run's cgroups and wait until they are empty, so nothing the
    run started can still write once the caller reads its files. Returns how many survived."""
    if cgroup is None:
        return 0  # the pid namespace died with its init: the kernel killed and reaped the rest
    deadline = time.monotonic() + timeout_s
    while True:
        members = cgroup.members() - {os.getpid()}
        if not members:
            return 0
        if time.monotonic() > deadline:
            return len(members)
        cgroup.kill_all()
        time.sleep(0.002)
