"""Reading what the sandboxed command wrote, from the push container that holds store credentials.

The command may still be running when push reads (it can write the exit-code file itself) and
may swap any file or directory for a link at any moment, say to ``/proc/self/environ``, which in
the push container holds the store's secret key. So no path is resolved through a link: each
directory is opened relative to its already-open parent with ``O_NOFOLLOW``, only regular files
are read, and links, FIFOs and devices are left out."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
from pathlib import Path

FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_CHUNK = 1 << 20
MAX_DEPTH = 256


def read_capped(path: Path, limit: int) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes of a regular file and whether it held more; nothing for anything else."""
    data = _read_regular(str(path), limit + 1)
    if data is None:
        return b"", False
    return data[:limit], len(data) > limit


def pack_tree(root: Path) -> bytes:
    """``root`` as gzip'd tar bytes in :func:`skillgym_core.archive.pack_dir`'s format: regular
    files and directories only, ownership and times zeroed, modes reduced to 0644/0755."""
    buffer = io.BytesIO()
    root_fd = os.open(root, DIR_FLAGS)
    try:
        with (
            gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            _pack_dir(tar, root_fd, "", 0)
    finally:
        os.close(root_fd)
    return buffer.getvalue()


def _pack_dir(tar: tarfile.TarFile, dir_fd: int, prefix: str, depth: int) -> None:
    for name in sorted(os.listdir(dir_fd)):
        relative = f"{prefix}{name}"
        try:
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(mode) and depth < MAX_DEPTH:
            try:
                child_fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            except OSError:
                continue  # replaced by a link (or removed) since it was listed
            try:
                tar.addfile(_member(relative, tarfile.DIRTYPE, 0o755))
                _pack_dir(tar, child_fd, f"{relative}/", depth + 1)
            finally:
                os.close(child_fd)
        elif stat.S_ISREG(mode):
            opened = _open_regular(name, dir_fd)
            if opened is None:
                continue
            fd, executable = opened
            try:
                data = _read_all(fd)
            finally:
                os.close(fd)
            member = _member(relative, tarfile.REGTYPE, 0o755 if executable else 0o644)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))


def _member(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.mode, member.mtime = kind, mode, 0
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    return member


def _open_regular(name: str, dir_fd: int | None = None) -> tuple[int, bool] | None:
    """An open descriptor of a regular file and whether it is executable; None for anything else."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    return fd, bool(info.st_mode & 0o111)


def _read_regular(path: str, limit: int) -> bytes | None:
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, _ = opened
    try:
        return _read_all(fd, limit)
    finally:
        os.close(fd)


def _read_all(fd: int, limit: int | None = None) -> bytes:
    chunks, size = [], 0
    while limit is None or size < limit:
        chunk = os.read(fd, READ_CHUNK if limit is None else min(READ_CHUNK, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
