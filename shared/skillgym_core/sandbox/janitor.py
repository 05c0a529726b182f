"""Cleanup that callers should not wait for: removing a sandbox's scratch directories and
cgroups. Right after a run the kernel may still be tearing down the sandbox's mount
namespace and cgroups, which makes ``rmdir`` slow; one daemon thread does it instead, and
whatever is still queued at interpreter exit is done then.

A tree left by untrusted code may be deeper than any recursion limit, hold directories its
owner cannot enter, or have filesystems mounted inside it (a run's tmpfs volume). Removal
detaches those mounts first (and never descends into one it could not detach: deleting
through a bind mount would delete what it exposes), then deletes holding one directory open
at a time, climbing back through ``..``, never following a link."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import queue
import re
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core.sandbox.fdtree import DIR_FLAGS, PATH_FLAGS, FileId, file_id

MNT_DETACH = 2
MOUNTINFO = Path("/proc/self/mountinfo")

_OCTAL_ESCAPE = re.compile(rb"\\([0-7]{3})")

_jobs: queue.Queue[Callable[[], object]] | None = None
_lock = threading.Lock()


def _work(jobs: queue.Queue[Callable[[], object]]) -> None:
    while True:
        job = jobs.get()
        with contextlib.suppress(Exception):
            job()
        jobs.task_done()


def _drain(jobs: queue.Queue[Callable[[], object]]) -> None:
    while True:
        try:
            job = jobs.get_nowait()
        except queue.Empty:
            return
        with contextlib.suppress(Exception):
            job()


def later(job: Callable[[], object]) -> None:
    """Run ``job`` on the cleanup thread."""
    global _jobs
    with _lock:
        if _jobs is None:
            _jobs = queue.Queue()
            threading.Thread(target=_work, args=(_jobs,), name="sandbox-janitor", daemon=True).start()
            atexit.register(_drain, _jobs)
        jobs = _jobs
    jobs.put(job)


def wait_idle() -> None:
    """Block until every queued cleanup has run (tests and benchmarks use it)."""
    if _jobs is not None:
        _jobs.join()


def discard_tree(path: Path) -> None:
    """Remove a directory tree (see :func:`remove_tree`) in the background."""
    later(lambda: remove_tree(path))


def remove_tree(path: Path) -> bool:
    """Delete ``path`` (a directory tree, a file or a link) now, mounts inside it detached
    first; True when it is gone."""
    points = mount_points_below(path)
    still_mounted: set[FileId] = set()
    if points:
        _detach(points)
        still_mounted = _identities(mount_points_below(path))
    with contextlib.suppress(OSError):
        _remove(path, still_mounted)
    return not os.path.lexists(path)


def mount_points_below(path: Path) -> list[str]:
    """Mount points at or below ``path`` in this process's mount table, deepest first."""
    absolute = Path(os.path.abspath(path))
    base = os.path.join(os.path.realpath(absolute.parent), absolute.name).rstrip("/")
    try:
        table = MOUNTINFO.read_bytes()
    except OSError:
        return []
    points = []
    for line in table.splitlines():
        fields = line.split(b" ", 5)
        if len(fields) < 5:
            continue
        point = os.fsdecode(_OCTAL_ESCAPE.sub(lambda match: bytes([int(match[1], 8)]), fields[4]))
        if point == base or point.startswith(base + "/"):
            points.append(point)
    return sorted(points, key=lambda point: point.count("/"), reverse=True)


@functools.cache
def _umount2() -> Callable[[bytes, int], int]:
    umount2 = ctypes.CDLL(None, use_errno=True).umount2
    umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    umount2.restype = ctypes.c_int
    return umount2


def _detach(points: list[str]) -> None:
    if os.geteuid() != 0:
        return
    for point in points:
        # a failure (EINVAL: already detached with its parent; EPERM) leaves the mount in the
        # table, and _remove then steps around it
        _umount2()(os.fsencode(point), MNT_DETACH)


def _identities(paths: list[str]) -> set[FileId]:
    identities = set()
    for path in paths:
        with contextlib.suppress(OSError):
            info = os.stat(path)
            identities.add((info.st_dev, info.st_ino))
    return identities


@dataclass
class _Dir:
    name: str
    identity: FileId
    subdirectories: list[str] = field(default_factory=list)


def _remove(path: Path, still_mounted: set[FileId]) -> None:
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    if (info.st_dev, info.st_ino) not in still_mounted:
        _empty(_open_dir(str(path), None), still_mounted)
    os.rmdir(path)


def _empty(fd: int, still_mounted: set[FileId]) -> None:
    """Delete everything below the directory open as ``fd`` (closed when done)."""
    try:
        stack = [_Dir("", file_id(fd), _unlink_files(fd))]
        while stack:
            top = stack[-1]
            if top.subdirectories:
                name = top.subdirectories.pop()
                child = _enter(fd, name, still_mounted)
                if child is not None:
                    os.close(fd)
                    fd = child
                    stack.append(_Dir(name, file_id(fd), _unlink_files(fd)))
                continue
            stack.pop()
            if not stack:
                return
            parent = os.open("..", DIR_FLAGS, dir_fd=fd)
            if file_id(parent) != stack[-1].identity:  # moved while being deleted: stop here
                os.close(parent)
                return
            os.close(fd)
            fd = parent
            with contextlib.suppress(OSError):
                os.rmdir(top.name, dir_fd=fd)
    finally:
        os.close(fd)


def _enter(parent: int, name: str, still_mounted: set[FileId]) -> int | None:
    try:
        fd = _open_dir(name, parent)
    except OSError:
        return None
    if file_id(fd) in still_mounted:
        os.close(fd)
        return None
    return fd


def _unlink_files(fd: int) -> list[str]:
    """Unlink every entry of the directory but subdirectories, which are returned."""
    subdirectories = []
    with contextlib.suppress(OSError), os.scandir(fd) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                subdirectories.append(entry.name)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.name, dir_fd=fd)
    return subdirectories


def _open_dir(name: str, parent: int | None) -> int:
    """Directory ``name`` opened for listing, its owner granted rwx first where it lacks them
    (a directory its owner cannot list, search or write cannot be emptied)."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    except PermissionError:
        _grant_owner_access(name, parent)
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & stat.S_IRWXU != stat.S_IRWXU:
        with contextlib.suppress(OSError):
            os.fchmod(fd, mode | stat.S_IRWXU)
    return fd


def _grant_owner_access(name: str, parent: int | None) -> None:
    handle = os.open(name, PATH_FLAGS, dir_fd=parent)
    try:
        # fchmod refuses O_PATH descriptors; the /proc link reaches the same directory
        os.chmod(f"/proc/self/fd/{handle}", stat.S_IMODE(os.fstat(handle).st_mode) | stat.S_IRWXU)
    finally:
        os.close(handle)
