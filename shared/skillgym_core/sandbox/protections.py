"""What this machine lets the local sandbox enforce, probed once per process.

Mandatory: an unprivileged host uid for sandboxed code, a user namespace that uid may create,
and the seccomp filter. Without any of them the sandbox refuses to run
(:class:`SandboxUnsafeError`) unless the caller passed the explicit unsafe flag. Landlock (for
running agent code from a verifier) and host tmpfs volumes (for ``storage_mb``) are reported,
and their absence is handled where they are used."""

from __future__ import annotations

import ctypes
import os
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from skillgym_core.errors import SandboxError
from skillgym_core.sandbox import seccomp
from skillgym_core.sandbox.bwrap import bwrap_path
from skillgym_core.sandbox.hostmounts import can_mount
from skillgym_core.sandbox.identity import SandboxIdentity
from skillgym_core.sandbox.untrusted import landlock_abi

CLONE_NEWUSER = 0x10000000


class SandboxUnsafeError(SandboxError):
    """The machine cannot provide a mandatory protection and no unsafe override was given."""

    reason = "sandbox_unsafe"


@dataclass(frozen=True)
class Protections:
    bwrap: bool
    unprivileged_uid: bool
    user_namespace: bool
    seccomp: bool
    landlock_abi: int
    workspace_volumes: bool
    sandbox_uid: int

    @property
    def missing(self) -> list[str]:
        required = {
            "bwrap": self.bwrap,
            "unprivileged_uid": self.unprivileged_uid,
            "user_namespace": self.user_namespace,
            "seccomp": self.seccomp,
        }
        return [name for name, present in required.items() if not present]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "missing": self.missing}


def _userns_allowed(identity: SandboxIdentity) -> bool:
    """Whether a process under the sandbox uid may create a user namespace (forked probe)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only reports through its exit status
        try:
            if identity.switch:
                os.setgroups([])
                os.setgid(identity.host_gid)
                os.setuid(identity.host_uid)
            libc = ctypes.CDLL(None, use_errno=True)
            os._exit(0 if libc.unshare(CLONE_NEWUSER) == 0 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


@lru_cache(maxsize=4)
def probe_protections(identity: SandboxIdentity) -> Protections:
    return Protections(
        bwrap=bwrap_path() is not None,
        unprivileged_uid=identity.host_uid != 0,
        user_namespace=_userns_allowed(identity),
        seccomp=seccomp.available(),
        landlock_abi=landlock_abi(),
        workspace_volumes=can_mount(),
        sandbox_uid=identity.host_uid,
    )


def require(protections: Protections, *, allow_unsafe: bool) -> None:
    if protections.missing and not allow_unsafe:
        raise SandboxUnsafeError(
            "the local sandbox cannot provide " + ", ".join(protections.missing)
            + "; fix the machine or pass the explicit unsafe flag (SKILLGYM_SANDBOX_ALLOW_UNSAFE=1)",
            missing=protections.missing,
        )  # fmt: skip
