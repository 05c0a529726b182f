"""Host-side mounts the local sandbox makes as root: size-capped tmpfs volumes for writable
workspaces, and bind mounts that make a source reachable by the unprivileged sandbox uid.

A workspace volume is a tmpfs of the task's ``storage_mb`` mounted on the workspace directory
and owned by the sandbox uid: the kernel refuses writes past the size (``ENOSPC``), inside the
run, instead of the host finding gigabytes after it. Its pages count against the writing
run's memory cgroup too, so a run can store at most ``min(storage_mb, memory_mb)``.

bwrap, started under the sandbox uid, resolves every mount source path itself; a source below
a directory only root may enter (``/root``, a ``0700`` temporary directory) would fail. Such a
source is bind-mounted for the duration of the run below a staging directory the sandbox uid
may traverse (:class:`Staging`)."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import itertools
import os
import stat
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from skillgym_core.errors import SandboxError
from skillgym_core.sandbox.owned_dirs import owned_dir

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC = 0x1, 0x2, 0x4, 0x20, 0x1000, 0x4000
MNT_DETACH = 2
STAGING_PREFIX = "skillgym-sandbox-"
_counter = itertools.count()
_lock = threading.Lock()


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


def can_mount() -> bool:
    return os.geteuid() == 0


def _mount(source: str, target: Path, fstype: str | None, flags: int, data: str | None) -> None:
    status = _libc().mount(
        source.encode(), str(target).encode(), fstype.encode() if fstype else None, flags,
        data.encode() if data else None,
    )  # fmt: skip
    if status != 0:
        code = ctypes.get_errno()
        raise SandboxError(f"mount {source} on {target}: {os.strerror(code)}", reason="host_mount_failed", errno=code)


def unmount(target: Path) -> bool:
    """Detach whatever is mounted on ``target``; False when nothing was (or it was not ours to)."""
    if _libc().umount2(str(target).encode(), MNT_DETACH) == 0:
        return True
    return ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT, errno.EPERM)


def mount_volume(directory: Path, *, size_mb: int, owner: tuple[int, int]) -> None:
    """Mount an empty tmpfs of ``size_mb`` on ``directory``, its root owned by ``owner``."""
    uid, gid = owner
    options = f"size={max(1, size_mb)}m,mode=0700,uid={uid},gid={gid},nr_inodes={max(1024, size_mb * 256)}"
    _mount("skillgym-volume", directory, "tmpfs", MS_NOSUID | MS_NODEV, options)


def is_mount_point(directory: Path) -> bool:
    try:
        return os.path.ismount(directory)
    except OSError:
        return False


def reachable_by(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid`` may walk from ``/`` to ``path`` (search permission on every ancestor)."""
    current = Path("/")
    for part in path.resolve().parts[1:-1] if path.resolve() != Path("/") else ():
        current = current / part
        try:
            info = os.stat(current)
        except OSError:
            return False
        mode = info.st_mode
        if info.st_uid == uid:
            allowed = mode & stat.S_IXUSR
        elif info.st_gid == gid:
            allowed = mode & stat.S_IXGRP
        else:
            allowed = mode & stat.S_IXOTH
        if not allowed:
            return False
    return True


@lru_cache(maxsize=1)
def _staging_root() -> Path:
    """``$SKILLGYM_SANDBOX_STAGING`` or ``/tmp``: never the caller's ``TMPDIR``, which may sit
    below a directory the sandbox uid cannot enter (the very case staging exists for). Staging
    directories of dead processes (mounts and all) are swept on first use."""
    parent = Path(os.environ.get("SKILLGYM_SANDBOX_STAGING") or "/tmp")
    return owned_dir(parent, STAGING_PREFIX, mode=0o711)


_persistent: dict[tuple[str, int, int], Path] = {}


def _release_persistent() -> None:
    for target in _persistent.values():
        unmount(target)
        with contextlib.suppress(OSError):
            target.rmdir() if target.is_dir() else target.unlink()
    _persistent.clear()


def reach_persistently(source: Path, uid: int, gid: int) -> Path:
    """Like :meth:`Staging.reach` for sources every run mounts read-only (the Python install):
    staged once per process, read-only, and released at exit. Read-only because a process killed
    before its exit leaves the mount behind in a temporary folder, where a recursive delete of that
    folder would otherwise go through it into the host's Python."""
    if not can_mount() or reachable_by(source, uid, gid):
        return source
    key = (str(source), uid, gid)
    with _lock:
        staged_path = _persistent.get(key)
        if staged_path is None:
            if not _persistent:
                atexit.register(_release_persistent)
            staged_path = _staging_root() / f"host-{len(_persistent)}"
            staged_path.mkdir(mode=0o711) if source.is_dir() else staged_path.touch()
            _mount(str(source), staged_path, None, MS_BIND | MS_REC, None)
            try:
                _mount("none", staged_path, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
            except SandboxError:
                unmount(staged_path)
                raise
            _persistent[key] = staged_path
    return staged_path


_live: set[Staging] = set()


def _release_live() -> None:
    """Release the stages of runs still in flight when the process exits (a run on a daemon
    thread never reaches its own release): a writable bind mount left in a temporary folder
    would carry a later recursive delete of that folder into the run's source."""
    with _lock:
        live = list(_live)
    for staging in live:
        staging.release()


atexit.register(_release_live)


def _forget_parents_stages() -> None:
    """In a forked child: the stages so far are the parent's, in the mount table both share, and
    go when the parent releases them; the child stages below a directory of its own."""
    global _lock
    _lock = threading.Lock()  # another of the parent's threads may have held it at the fork
    _staging_root.cache_clear()
    _persistent.clear()
    _live.clear()


os.register_at_fork(after_in_child=_forget_parents_stages)


class Staging:
    """Bind mounts made for one run; ``reach`` returns a path the sandbox uid can resolve."""

    def __init__(self, uid: int, gid: int) -> None:
        self.uid, self.gid = uid, gid
        self._made: list[Path] = []
        self._run_dir: Path | None = None

    def reach(self, source: Path) -> Path:
        if not can_mount() or reachable_by(source, self.uid, self.gid):
            return source
        if self._run_dir is None:
            with _lock:
                self._run_dir = _staging_root() / f"run-{next(_counter)}"
                _live.add(self)
            self._run_dir.mkdir(mode=0o711)
        target = self._run_dir / str(len(self._made))
        if source.is_dir():
            target.mkdir()
        else:
            target.touch()
        self._made.append(target)
        _mount(str(source), target, None, MS_BIND | MS_REC, None)
        return target

    def release(self) -> None:
        while True:
            try:
                target = self._made.pop()  # also popped by the exit-time release, on another thread
            except IndexError:
                break
            unmount(target)
            with contextlib.suppress(OSError):
                target.rmdir() if target.is_dir() else target.unlink()
        if self._run_dir is not None:
            with contextlib.suppress(OSError):
                self._run_dir.rmdir()
        with _lock:
            _live.discard(self)


@contextlib.contextmanager
def staged(uid: int, gid: int) -> Iterator[Staging]:
    staging = Staging(uid, gid)
    try:
        yield staging
    finally:
        staging.release()


HAND_OVER_MAX_ENTRIES = 200_000


def hand_over_tree(root: Path, owner: tuple[int, int]) -> None:
    """Make ``root`` and everything below it (links themselves, never their targets) owned by
    ``owner``, so the sandbox uid may write where the caller mounted it writable, including
    files the host added between two runs. Bounded: a tree of more entries than
    ``HAND_OVER_MAX_ENTRIES`` is handed over only that far."""
    if os.geteuid() != 0:
        return
    uid, gid = owner
    stack, seen = [str(root)], 0
    with contextlib.suppress(OSError):
        info = os.lstat(root)
        if (info.st_uid, info.st_gid) != owner:
            os.lchown(root, uid, gid)
    while stack and seen < HAND_OVER_MAX_ENTRIES:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if (info.st_uid, info.st_gid) != owner:
                    os.lchown(entry.path, uid, gid)
                if stat.S_ISDIR(info.st_mode):
                    stack.append(entry.path)
