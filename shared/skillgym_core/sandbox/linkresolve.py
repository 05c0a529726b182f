"""Resolving links inside a tree a sandboxed command could have written.

A link in such a tree may point at host files, at files that only exist where the next
sandbox mounts them (like ``/tests``), in a loop, or through more links than any lookup
should follow. The resolver follows links the way the kernel would inside the sandbox, one
component at a time through descriptors (see :mod:`.fdtree`), but never leaves the tree: a
target that climbs above its root, or an absolute one not below where the tree is mounted in
the sandbox, leads outside. Where a link ends is an open regular file, a directory inside
the tree (as path components below its root), or a reason it leads nowhere a copy may
point."""

from __future__ import annotations

import contextlib
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from skillgym_core.sandbox.fdtree import FILE_FLAGS, PATH_FLAGS, FileId, file_id, open_checked_parent, workspace_changed

MAX_LINK_HOPS = 40  # the kernel's own limit on links followed in one lookup
MAX_LINK_STEPS = 1_000_000  # path components walked resolving all links of one copy


@dataclass
class LinkEnd:
    """Where a link leads: an open regular ``file``, the directory at ``parts`` below the root,
    or nowhere a copy may point (``reason``)."""

    reason: str | None = None
    file: int | None = None
    parts: tuple[str, ...] = ()


class _Cursor:
    """A source directory held open for lookups only, with the names and identities of the
    directories from the root down to it."""

    def __init__(self, fd: int, path: list[tuple[str, FileId]]) -> None:
        self.fd = fd
        self.path = path

    @property
    def at_root(self) -> bool:
        return len(self.path) == 1

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.path[1:])

    def down(self, name: str, info: os.stat_result) -> None:
        child = os.open(name, PATH_FLAGS, dir_fd=self.fd)
        if file_id(child) != (info.st_dev, info.st_ino):
            os.close(child)
            raise workspace_changed()
        self._move(child)
        self.path.append((name, (info.st_dev, info.st_ino)))

    def up(self) -> None:
        self._move(open_checked_parent(self.fd, self.path[-2][1], PATH_FLAGS))
        self.path.pop()

    def to_root(self, root: int) -> None:
        self._move(os.open(".", PATH_FLAGS, dir_fd=root))
        del self.path[1:]

    def _move(self, fd: int) -> None:
        os.close(self.fd)
        self.fd = fd

    def close(self) -> None:
        os.close(self.fd)


class LinkResolver:
    """Follows links through the source tree the way the kernel would inside the sandbox,
    except that it never leaves the tree's root: ``..`` above it, or an absolute target not
    below ``inside_prefix``, leads outside."""

    def __init__(self, root: int, inside_prefix: str | None) -> None:
        self.root = root
        self.prefix = None if inside_prefix is None else _parts(inside_prefix)
        self.steps = 0

    @contextlib.contextmanager
    def resolve(self, link_dir: list[tuple[str, FileId]], link_dir_fd: int, target: str) -> Iterator[LinkEnd]:
        """The end of a link reading ``target`` in the directory at ``link_dir`` (root first)."""
        cursor = _Cursor(os.open(".", PATH_FLAGS, dir_fd=link_dir_fd), link_dir)
        try:
            end = self._follow(cursor, target)
        finally:
            cursor.close()
        try:
            yield end
        finally:
            if end.file is not None:
                os.close(end.file)

    def _follow(self, cursor: _Cursor, target: str) -> LinkEnd:
        pending: deque[str] = deque()
        hops = 1
        try:
            if not self._expand(cursor, pending, target):
                return LinkEnd("link_outside")
            while pending:
                self.steps += 1
                if self.steps > MAX_LINK_STEPS:
                    return LinkEnd("link_too_complex")
                part = pending.popleft()
                if part == "..":
                    if cursor.at_root:
                        return LinkEnd("link_outside")
                    cursor.up()
                    continue
                info = os.stat(part, dir_fd=cursor.fd, follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    hops += 1
                    if hops > MAX_LINK_HOPS:
                        return LinkEnd("link_loop")
                    if not self._expand(cursor, pending, os.readlink(part, dir_fd=cursor.fd)):
                        return LinkEnd("link_outside")
                elif stat.S_ISDIR(info.st_mode):
                    cursor.down(part, info)
                elif pending:  # a file used as a directory
                    return LinkEnd("link_dangling")
                elif stat.S_ISREG(info.st_mode):
                    return LinkEnd(file=os.open(part, FILE_FLAGS, dir_fd=cursor.fd))
                else:
                    return LinkEnd("special_file")
        except (FileNotFoundError, NotADirectoryError):
            return LinkEnd("link_dangling")
        except OSError:
            return LinkEnd("link_unreadable")
        return LinkEnd(parts=cursor.parts)

    def _expand(self, cursor: _Cursor, pending: deque[str], target: str) -> bool:
        """Queue ``target``'s components to walk next; False when it is absolute and not inside."""
        parts = _parts(target)
        if target.startswith("/"):
            if self.prefix is None or parts[: len(self.prefix)] != self.prefix:
                return False
            parts = parts[len(self.prefix) :]
            cursor.to_root(self.root)
        pending.extendleft(reversed(parts))
        return True


def _parts(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.split("/") if part not in ("", "."))


def relative_link(link_dir: list[str], target: tuple[str, ...]) -> str:
    """The relative link text that leads from directory ``link_dir`` to ``target`` (both as
    components below the same root)."""
    common = 0
    while common < min(len(link_dir), len(target)) and link_dir[common] == target[common]:
        common += 1
    return "/".join([".."] * (len(link_dir) - common) + list(target[common:])) or "."
