"""Who sandboxed code is: an unprivileged host uid, seen inside the sandbox as ``agent`` (1000).

bwrap is started under this uid (never root) with its own user namespace, so the kernel checks
every file, sysctl and ptrace access against an unprivileged user: root-only files stay
unreadable and ``/proc/sys`` unwritable even though the sandbox maps its user to a normal
inside uid. Workspaces handed to the sandbox are owned by this uid."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_SANDBOX_UID = 2_000_000  # far from distribution and human ranges; no passwd entry needed
INSIDE_UID = 1000
INSIDE_USER = "agent"
SANDBOX_UID_ENV = "SKILLGYM_SANDBOX_UID"


@dataclass(frozen=True)
class SandboxIdentity:
    """``host_uid``/``host_gid`` own the sandbox's processes and files on the host; ``switch``
    says whether bwrap must be started under them (the caller is root) or already runs as an
    unprivileged user (then host ids are the caller's own)."""

    host_uid: int
    host_gid: int
    switch: bool

    @property
    def owner(self) -> tuple[int, int]:
        return self.host_uid, self.host_gid

    def passwd(self) -> bytes:
        """``/etc/passwd`` and ``/etc/group`` lines for the inside user (git, pip and ssh look it up)."""
        return f"{INSIDE_USER}:x:{INSIDE_UID}:{INSIDE_UID}:sandbox:/tmp:/bin/bash\n".encode()

    def group(self) -> bytes:
        return f"{INSIDE_USER}:x:{INSIDE_UID}:\n".encode()


def configured_uid() -> int:
    raw = os.environ.get(SANDBOX_UID_ENV, "").strip()
    if not raw:
        return DEFAULT_SANDBOX_UID
    uid = int(raw)
    if uid <= 0:
        raise ValueError(f"{SANDBOX_UID_ENV} must be a positive, non-root uid, got {uid}")
    return uid


@lru_cache(maxsize=4)
def sandbox_identity(uid: int | None = None) -> SandboxIdentity:
    """Root callers switch to ``uid`` (default :func:`configured_uid`); others run as themselves."""
    if os.geteuid() != 0:
        return SandboxIdentity(os.getuid(), os.getgid(), switch=False)
    chosen = configured_uid() if uid is None else uid
    return SandboxIdentity(chosen, chosen, switch=True)


def host_passwd_with_agent(identity: SandboxIdentity) -> bytes:
    """The host's system accounts (uid < 1000, no secrets: ``/etc/passwd`` holds none) plus the
    inside user, so names resolve inside and the agent appears as itself."""
    return _system_lines("/etc/passwd", 2) + identity.passwd()


def host_group_with_agent(identity: SandboxIdentity) -> bytes:
    return _system_lines("/etc/group", 2) + identity.group()


@lru_cache(maxsize=4)
def _system_lines(path: str, id_field: int) -> bytes:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return b""
    kept = []
    for line in lines:
        fields = line.split(":")
        if (len(fields) > id_field and fields[id_field].isdigit() and int(fields[id_field]) < INSIDE_UID) or (
            len(fields) > id_field and fields[id_field] == "65534"
        ):
            kept.append(line)
    return ("\n".join(kept) + "\n").encode() if kept else b""
