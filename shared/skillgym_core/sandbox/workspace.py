"""Host-side handling of directories a sandboxed command could have written.

A workspace written by untrusted code may hold links to host files, FIFOs that block a reader
forever, devices, or files far larger than the host wants to read. Nothing here follows a
link out of the workspace or opens anything but a regular file: the readers below open
without following links and without blocking, and check what they opened before reading it.

This module is the public face of the package's workspace handling: the safe readers live
here, the copy (:func:`safe_copy_tree`, :class:`CopyReport`) in :mod:`.treecopy`, link
resolution inside a tree in :mod:`.linkresolve`, and the descriptor-walking primitives they
share (with :class:`WorkspaceError`) in :mod:`.fdtree`."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from skillgym_core.sandbox.fdtree import READ_CHUNK, WorkspaceError
from skillgym_core.sandbox.treecopy import CopyReport, safe_copy_tree

__all__ = [
    "CopyReport",
    "WorkspaceError",
    "read_regular_file",
    "resolve_inside",
    "safe_copy_tree",
    "sha256_regular_file",
]


@contextlib.contextmanager
def _regular_file_fd(path: Path, max_bytes: int) -> Iterator[int | None]:
    """An open descriptor if ``path`` is a regular file (not a link, FIFO or device) of at most
    ``max_bytes``; None otherwise. Opened without following links and without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        yield None
        return
    try:
        info = os.fstat(fd)
        yield fd if stat.S_ISREG(info.st_mode) and info.st_size <= max_bytes else None
    finally:
        os.close(fd)


def read_regular_file(path: Path, *, max_bytes: int) -> bytes | None:
    """The file's bytes if it is a regular file (not a link) of at most ``max_bytes``, else None."""
    with _regular_file_fd(path, max_bytes) as fd:
        return None if fd is None else os.read(fd, max_bytes + 1)[:max_bytes]


def resolve_inside(root: Path, relative: str) -> Path:
    """``root / relative`` with every component checked not to be a link or to leave ``root``."""
    parts = Path(relative).parts
    if not parts or Path(relative).is_absolute() or ".." in parts:
        raise WorkspaceError(f"path escapes the workspace: {relative!r}", path=relative)
    current = root
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise WorkspaceError(f"path goes through a link: {relative!r}", path=relative)
    return current / parts[-1]


def sha256_regular_file(path: Path, *, max_bytes: int) -> str | None:
    """SHA-256 of a regular file (never a link, FIFO or device); None when it is not one."""
    with _regular_file_fd(path, max_bytes) as fd:
        if fd is None:
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, READ_CHUNK):
            digest.update(chunk)
        return digest.hexdigest()
