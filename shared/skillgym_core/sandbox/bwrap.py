"""The bubblewrap command line for one run: a read-only slice of the host on a tmpfs root that
is remounted read-only, private /tmp, /proc and /dev, every namespace but the user one
unshared, no capabilities, a cleared environment, and the caller's mounts."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath

from skillgym_core.errors import SandboxError
from skillgym_core.sandbox.base import Limits, Mount

SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_LINKS_OR_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# host secrets under the otherwise read-only /etc: masked with an empty file or directory
MASKED_ETC = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh", "/etc/ssl/private", "/etc/pip.conf", "/etc/npmrc", "/etc/subuid", "/etc/subgid",
)  # fmt: skip
RESERVED_TARGETS = ("/", "/usr", "/etc", "/proc", "/dev", "/tmp", *SYSTEM_LINKS_OR_DIRS)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NAMESPACE_FLAGS = (
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
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


@lru_cache(maxsize=8)
def host_binds(extra_ro: tuple[str, ...]) -> tuple[str, ...]:
    """The read-only host part of the command line (the same for every run)."""
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
    for directory in (str(python_prefix()), *extra_ro):
        if not directory.startswith(SYSTEM_DIRS) and Path(directory).exists():
            args += ["--ro-bind", directory, directory]
    return tuple(args)


def check_target(target: str) -> str:
    path = PurePosixPath(target)
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
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
    }
    merged.update(env or {})
    return merged


def build_argv(
    command: Sequence[str],
    *,
    mounts: Sequence[Mount],
    workdir: str,
    env: Mapping[str, str] | None,
    limits: Limits,
    info_fd: int,
    block_fd: int,
    extra_ro: tuple[str, ...] = (),
) -> list[str]:
    executable = bwrap_path()
    if executable is None:
        raise SandboxError("bubblewrap (bwrap) is not installed", reason="bwrap_missing")
    if not command:
        raise SandboxError("empty command", reason="bad_command")
    argv = [executable, "--info-fd", str(info_fd), "--block-fd", str(block_fd), *host_binds(extra_ro)]
    argv += ["--size", str(limits.file_size_mb * 1024 * 1024), "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    targets: list[str] = []
    for mount in sorted(mounts, key=lambda m: len(PurePosixPath(m.target).parts)):
        target = check_target(mount.target)
        host = Path(mount.host)
        if not host.exists():
            raise SandboxError(f"mount source does not exist: {host}", reason="bad_mount", host=str(host))
        argv += ["--bind" if mount.writable else "--ro-bind", str(host.resolve()), target]
        targets.append(target)
    workdir = check_target(workdir) if workdir != "/" else workdir
    if not any(workdir == t or workdir.startswith(t.rstrip("/") + "/") for t in targets):
        argv += ["--dir", workdir]
    argv += ["--remount-ro", "/", *NAMESPACE_FLAGS, "--chdir", workdir]
    for key, value in sandbox_env(env).items():
        argv += ["--setenv", key, value]
    return [*argv, "--", *command]
