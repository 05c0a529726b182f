"""Descriptor-walking primitives for trees a sandboxed command could have written.

A tree written by untrusted code may be deeper than any recursion limit and may change while
the host walks it. A walk therefore holds one directory open at a time, moves down by name
relative to it and climbs back through ``..``, checking each step against the identity
(device, inode) of the directory it expects: descriptors stay constant however deep or wide
the tree is, and a tree moved mid-walk is noticed instead of followed. Every open refuses to
follow a link (``O_NOFOLLOW``) and a regular file is opened without blocking, so a FIFO
cannot hang the reader.

Shared by the copy (:mod:`.treecopy`), the link resolver (:mod:`.linkresolve`) and the
cleanup thread (:mod:`.janitor`)."""

from __future__ import annotations

import os

from skillgym_core.errors import SandboxError

READ_CHUNK = 1 << 20

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
PATH_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

FileId = tuple[int, int]


class WorkspaceError(SandboxError):
    """A workspace the host refuses to copy or read (too big, too deep, or a path escaping it)."""

    reason = "workspace_unsafe"


def file_id(fd: int) -> FileId:
    """The (device, inode) identity of what ``fd`` is open on."""
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def workspace_changed() -> WorkspaceError:
    return WorkspaceError("the workspace changed while it was being copied", reason="workspace_changed")


def open_checked_parent(fd: int, expected: FileId, flags: int) -> int:
    """The directory above ``fd``, checked to be the one the walk came down from."""
    parent = os.open("..", flags, dir_fd=fd)
    if file_id(parent) != expected:
        os.close(parent)
        raise workspace_changed()
    return parent


def open_listable_dir(parent: int, name: str) -> int | None:
    """Directory ``name`` open for listing, or None when it cannot be listed or left again
    through ``..`` (no search permission)."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    except OSError:
        return None
    try:
        os.close(os.open("..", PATH_FLAGS, dir_fd=fd))
    except OSError:
        os.close(fd)
        return None
    return fd
