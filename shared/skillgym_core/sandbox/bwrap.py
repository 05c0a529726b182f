"""The bubblewrap invocation for one run.

The sandbox is a read-only slice of the host (``/usr``, ``/etc`` less its secrets, the Python
install) on a tmpfs root that is remounted read-only, with a private ``/tmp``, ``/proc`` and
``/dev`` and the caller's mounts. Every namespace is new, the user namespace included: bwrap
runs under the unprivileged sandbox uid (see :mod:`.identity`), maps it to ``agent`` (1000)
inside, forbids nested user namespaces, drops every capability and installs the seccomp
filter (:mod:`.seccomp`) before the command starts.

Nothing of the host leaks through bwrap itself: it is started with an empty environment (the
command gets only :func:`sandbox_env`), and its options travel through a descriptor
(``--args``), so the sandbox's ``/proc/1/cmdline`` shows no host path or variable."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from skillgym_core.errors import SandboxError
from skillgym_core.sandbox import seccomp
from skillgym_core.sandbox.base import Limits, Mount
from skillgym_core.sandbox.hostmounts import reach_persistently
from skillgym_core.sandbox.identity import INSIDE_UID, SandboxIdentity, host_group_with_agent, host_passwd_with_agent

SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_LINKS_OR_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# host secrets under the otherwise read-only /etc: masked with an empty file or directory
# (the sandbox uid could not read most of them anyway; masking also hides their names and sizes)
MASKED_ETC = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh", "/etc/ssl/private", "/etc/pip.conf", "/etc/npmrc", "/etc/subuid", "/etc/subgid",
    "/etc/machine-id", "/etc/hostname", "/etc/docker", "/etc/containers", "/etc/kubernetes",
)  # fmt: skip
RESERVED_TARGETS = ("/", "/usr", "/etc", "/proc", "/dev", "/tmp", *SYSTEM_LINKS_OR_DIRS)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
UNTRUSTED_RUNNER = "/opt/skillgym/bin/run-untrusted"
NAMESPACE_FLAGS = (
    "--unshare-user",
    "--disable-userns",
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--cap-drop",
    "ALL",
)


@lru_cache(maxsize=1)
def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def python_prefix() -> Path:
    """The interpreter install the sandbox exposes (read-only, first on PATH)."""
    return Path(sys.base_prefix).resolve()


def untrusted_runner_source() -> Path:
    return Path(__file__).with_name("untrusted.py")


@lru_cache(maxsize=1)
def _untrusted_runner() -> bytes:
    """The runner's source, mounted from memory (no host path shows in the sandbox's mount table)."""
    return untrusted_runner_source().read_bytes()


def host_ro_sources(extra_ro: tuple[str, ...]) -> list[str]:
    """Host directories outside ``/usr`` and ``/etc`` bound read-only at their own path."""
    return [d for d in (str(python_prefix()), *extra_ro) if not d.startswith(SYSTEM_DIRS) and Path(d).exists()]


@lru_cache(maxsize=1)
def _system_binds() -> tuple[str, ...]:
    args: list[str] = []
    for directory in SYSTEM_DIRS:
        if Path(directory).is_dir():
            args += ["--ro-bind", directory, directory]
    for entry in SYSTEM_LINKS_OR_DIRS:
        path = Path(entry)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), entry]
        elif path.is_dir():
            args += ["--ro-bind", entry, entry]
    for masked in MASKED_ETC:
        path = Path(masked)
        if path.is_dir() and not path.is_symlink():
            args += ["--tmpfs", masked]
        elif path.exists() and not path.is_symlink():
            args += ["--ro-bind", "/dev/null", masked]
    return tuple(args)


def check_target(target: str) -> str:
    # PurePosixPath keeps a leading "//" (POSIX leaves it open); the kernel reads it as "/"
    path = PurePosixPath("/" + target.lstrip("/")) if target.startswith("/") else PurePosixPath(target)
    if not path.is_absolute() or ".." in path.parts:
        raise SandboxError(f"mount target must be absolute and normalized: {target!r}", reason="bad_mount")
    normalized = str(path)
    if normalized in RESERVED_TARGETS or normalized.startswith(("/proc/", "/dev/")):
        raise SandboxError(f"mount target is reserved: {target!r}", reason="bad_mount", target=target)
    return normalized


def sandbox_env(env: Mapping[str, str] | None) -> dict[str, str]:
    merged = {
        "PATH": f"{python_prefix() / 'bin'}:{DEFAULT_PATH}",
        "HOME": "/tmp",
        "USER": "agent",
        "LOGNAME": "agent",
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "SKILLGYM_RUN_UNTRUSTED": UNTRUSTED_RUNNER,
    }
    merged.update(env or {})
    return merged


def _data_fd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass
class Invocation:
    """bwrap's short command line and the descriptors it reads (close them after the spawn)."""

    argv: list[str]
    fds: list[int] = field(default_factory=list)

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


@dataclass(frozen=True)
class Hardening:
    """Which protections an invocation carries (the local sandbox decides from what it probed)."""

    user_namespace: bool = True
    seccomp: bool = True


def build_invocation(
    command: Sequence[str],
    *,
    mounts: Sequence[Mount],
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Limits,
    identity: SandboxIdentity,
    reach: Callable[[Path], Path] = lambda path: path,
    pass_fds: Sequence[str] = (),
    extra_ro: tuple[str, ...] = (),
    hardening: Hardening = Hardening(),
) -> Invocation:
    """``reach`` maps a host source to a path the sandbox uid can resolve; ``pass_fds`` are
    bwrap options with descriptors the caller made (``--info-fd N``...)."""
    executable = bwrap_path()
    if executable is None:
        raise SandboxError("bubblewrap (bwrap) is not installed", reason="bwrap_missing")
    if not command:
        raise SandboxError("empty command", reason="bad_command")
    invocation = Invocation([])
    try:
        options = _options(mounts, workdir, env, limits, identity, reach, extra_ro, hardening, invocation)
        payload = b"".join(arg.encode() + b"\0" for arg in [*pass_fds, *options])
        args_fd = _data_fd("bwrap-args", payload)
        invocation.fds.append(args_fd)
        invocation.argv = [executable, "--args", str(args_fd), "--", *command]
    except BaseException:
        invocation.close()
        raise
    return invocation


def _options(
    mounts: Sequence[Mount],
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Limits,
    identity: SandboxIdentity,
    reach: Callable[[Path], Path],
    extra_ro: tuple[str, ...],
    hardening: Hardening,
    invocation: Invocation,
) -> list[str]:
    args = list(_system_binds())
    for directory in host_ro_sources(extra_ro):
        source = reach_persistently(Path(directory), identity.host_uid, identity.host_gid)
        args += ["--ro-bind", str(source), directory]
    passwd = _data_fd("passwd", host_passwd_with_agent(identity))
    group = _data_fd("group", host_group_with_agent(identity))
    invocation.fds += [passwd, group]
    args += ["--ro-bind-data", str(passwd), "/etc/passwd", "--ro-bind-data", str(group), "/etc/group"]
    runner = _data_fd("run-untrusted", _untrusted_runner())
    invocation.fds.append(runner)
    args += ["--perms", "0555", "--ro-bind-data", str(runner), UNTRUSTED_RUNNER]
    args += ["--size", str(limits.file_size_mb * 1024 * 1024), "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    targets: list[str] = []
    for mount in sorted(mounts, key=lambda m: len(PurePosixPath(m.target).parts)):
        target = check_target(mount.target)
        host = Path(mount.host)
        if not host.exists():
            raise SandboxError(f"mount source does not exist: {host}", reason="bad_mount", host=str(host))
        args += ["--bind" if mount.writable else "--ro-bind", str(reach(host.resolve())), target]
        targets.append(target)
    workdir = check_target(workdir) if workdir != "/" else workdir
    if not any(workdir == t or workdir.startswith(t.rstrip("/") + "/") for t in targets):
        args += ["--dir", workdir]
    args += ["--remount-ro", "/"]
    if hardening.user_namespace:
        args += [*NAMESPACE_FLAGS, "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID)]
    else:
        args += [flag for flag in NAMESPACE_FLAGS if flag not in ("--unshare-user", "--disable-userns")]
    if hardening.seccomp:
        program = seccomp.program_fd()
        invocation.fds.append(program)
        args += ["--seccomp", str(program)]
    args += ["--chdir", workdir]
    for key, value in sandbox_env(env).items():
        args += ["--setenv", key, value]
    return args


@contextlib.contextmanager
def invocation_of(command: Sequence[str], **kwargs: object) -> Iterator[Invocation]:
    invocation = build_invocation(command, **kwargs)  # type: ignore[arg-type]
    try:
        yield invocation
    finally:
        invocation.close()
