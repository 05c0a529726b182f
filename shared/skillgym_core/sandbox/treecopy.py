"""Copying a tree a sandboxed command could have written onto the host.

A workspace written by untrusted code may hold links to host files (or to files that only
exist where the next sandbox mounts them, like ``/tests``), FIFOs that block a reader forever,
devices, sparse files far larger than their data, trees deeper than any recursion limit, or
more data than the host wants to copy. The copy never follows a link out of the workspace nor
opens anything but its directories and regular files. It turns links that resolve inside the
workspace (see :mod:`.linkresolve`) into plain files (a link to a file) or relative links (a
link to a directory); every other link and every special file is dropped and reported. Data
is copied extent by extent, so holes stay holes and cost nothing of the byte budget, and no
setuid, setgid or sticky bit survives.

The copy walks the tree holding one directory of each side open and climbs back through
``..``, checking it leads to the directory it came from (see :mod:`.fdtree`): descriptors stay
constant however deep or wide the tree is."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core.sandbox.fdtree import (
    DIR_FLAGS,
    FILE_FLAGS,
    READ_CHUNK,
    FileId,
    WorkspaceError,
    file_id,
    open_checked_parent,
    open_listable_dir,
)
from skillgym_core.sandbox.linkresolve import LinkResolver, relative_link

MAX_DEPTH = 4096
PATH_MAX = 4096

_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class CopyReport:
    """What a copy did: ``files`` entries seen, ``bytes`` of data written (holes are free),
    ``links`` honoured, and what was ``dropped`` (``{"path", "reason"}``; ``skipped`` lists
    the same paths)."""

    files: int = 0
    bytes: int = 0
    links: int = 0
    skipped: list[str] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)

    def drop(self, path: str, reason: str) -> None:
        self.skipped.append(path)
        self.dropped.append({"path": path, "reason": reason})


def safe_copy_tree(
    src: Path,
    dst: Path,
    *,
    max_bytes: int,
    max_files: int,
    owner: tuple[int, int] | None = None,
    inside_prefix: str | None = None,
    max_depth: int = MAX_DEPTH,
) -> CopyReport:
    """Copy ``src`` into ``dst`` (created when missing), never following a link out of ``src``
    nor opening anything but its directories and regular files.

    ``inside_prefix`` is where ``src`` is mounted in the sandbox that wrote it (``/app``):
    absolute links below it lead inside. ``owner`` (uid, gid) is given everything created.
    ``max_bytes`` bounds the data written (holes are free), ``max_files`` the entries seen,
    ``max_depth`` the directory nesting; past one, WorkspaceError (``workspace_too_large``,
    ``workspace_too_deep``). On any error ``dst`` holds a partial copy for the caller to
    discard; nothing but WorkspaceError and OSError is raised."""
    source_root = os.open(src, DIR_FLAGS)
    try:
        copy = _TreeCopy(
            LinkResolver(source_root, inside_prefix),
            max_bytes=max_bytes,
            max_files=max_files,
            max_depth=max_depth,
            owner=owner,
        )
        copy.run(source_root, dst)
    finally:
        os.close(source_root)
    return copy.report


@dataclass
class _Dir:
    """A directory on the copy's current path: its name in its parent, the identities of the
    source and of its copy (to check that ``..`` climbs back to them), and the subdirectories
    still to copy."""

    name: str
    source: FileId
    copy: FileId
    pending: list[str] = field(default_factory=list)


class _Pair:
    """Open descriptors of the source directory being copied and of its copy."""

    def __init__(self, source: int, copy: int) -> None:
        self.source, self.copy = source, copy

    def move(self, source: int, copy: int) -> None:
        self.close()
        self.source, self.copy = source, copy

    def close(self) -> None:
        os.close(self.source)
        os.close(self.copy)


class _TreeCopy:
    def __init__(
        self, links: LinkResolver, *, max_bytes: int, max_files: int, max_depth: int, owner: tuple[int, int] | None
    ) -> None:
        self.links = links
        self.max_bytes, self.max_files, self.max_depth = max_bytes, max_files, max_depth
        self.owner = owner
        self.report = CopyReport()

    def run(self, source_root: int, dst: Path) -> None:
        copy_root = self._open_destination(dst, os.fstat(source_root))
        try:
            source = os.open(".", DIR_FLAGS, dir_fd=source_root)
        except BaseException:
            os.close(copy_root)
            raise
        pair = _Pair(source, copy_root)
        try:
            stack = [_Dir("", file_id(pair.source), file_id(pair.copy))]
            self._copy_entries(stack, pair)
            while stack:
                if stack[-1].pending:
                    self._enter(stack, pair, stack[-1].pending.pop())
                else:
                    self._leave(stack, pair)
        finally:
            pair.close()

    def _open_destination(self, dst: Path, source: os.stat_result) -> int:
        dst.parent.mkdir(parents=True, exist_ok=True)
        created = True
        try:
            os.mkdir(dst, 0o700)
        except FileExistsError:
            created = False
        fd = os.open(dst, DIR_FLAGS)
        try:
            if created:
                os.fchmod(fd, _permissions(source.st_mode) | stat.S_IRWXU)
            if self.owner is not None:
                os.fchown(fd, *self.owner)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _enter(self, stack: list[_Dir], pair: _Pair, name: str) -> None:
        source = open_listable_dir(pair.source, name)
        if source is None:
            self._drop(stack, name, "unreadable")
            return
        try:
            copy = os.open(name, DIR_FLAGS, dir_fd=pair.copy)
        except BaseException:
            os.close(source)
            raise
        stack.append(_Dir(name, file_id(source), file_id(copy)))
        pair.move(source, copy)
        self._copy_entries(stack, pair)

    def _leave(self, stack: list[_Dir], pair: _Pair) -> None:
        stack.pop()
        if not stack:
            return
        source = open_checked_parent(pair.source, stack[-1].source, DIR_FLAGS)
        try:
            copy = open_checked_parent(pair.copy, stack[-1].copy, DIR_FLAGS)
        except BaseException:
            os.close(source)
            raise
        pair.move(source, copy)

    def _copy_entries(self, stack: list[_Dir], pair: _Pair) -> None:
        try:
            entries = os.scandir(pair.source)
        except OSError:
            self._drop(stack, "", "unreadable")
            return
        with entries:
            while True:
                try:
                    entry = next(entries, None)
                except OSError:
                    self._drop(stack, "", "unreadable")
                    return
                if entry is None:
                    return
                self._copy_entry(stack, pair, entry.name)

    def _copy_entry(self, stack: list[_Dir], pair: _Pair, name: str) -> None:
        self.report.files += 1
        if self.report.files > self.max_files:
            raise WorkspaceError(f"workspace has more than {self.max_files} entries", reason="workspace_too_large")
        try:
            info = os.stat(name, dir_fd=pair.source, follow_symlinks=False)
        except OSError:
            self._drop(stack, name, "unreadable")
            return
        if stat.S_ISDIR(info.st_mode):
            self._make_dir(stack, pair, name, info.st_mode)
        elif stat.S_ISREG(info.st_mode):
            self._copy_regular(stack, pair, name)
        elif stat.S_ISLNK(info.st_mode):
            self._copy_link(stack, pair, name)
        else:
            self._drop(stack, name, "special_file")

    def _make_dir(self, stack: list[_Dir], pair: _Pair, name: str, mode: int) -> None:
        if len(stack) > self.max_depth:
            raise WorkspaceError(
                f"workspace is more than {self.max_depth} directories deep", reason="workspace_too_deep"
            )
        os.mkdir(name, 0o700, dir_fd=pair.copy)
        os.chmod(name, _permissions(mode) | stat.S_IRWXU, dir_fd=pair.copy)
        self._own(name, pair.copy)
        stack[-1].pending.append(name)

    def _copy_regular(self, stack: list[_Dir], pair: _Pair, name: str) -> None:
        try:
            source = os.open(name, FILE_FLAGS, dir_fd=pair.source)
        except OSError:
            self._drop(stack, name, "unreadable")
            return
        try:
            if not self._copy_file(source, pair.copy, name):
                self._drop(stack, name, "special_file")
        finally:
            os.close(source)

    def _copy_link(self, stack: list[_Dir], pair: _Pair, name: str) -> None:
        try:
            target = os.readlink(name, dir_fd=pair.source)
        except OSError:
            self._drop(stack, name, "unreadable")
            return
        with self.links.resolve([(d.name, d.source) for d in stack], pair.source, target) as end:
            if end.reason is not None:
                self._drop(stack, name, end.reason)
                return
            if end.file is not None:
                if not self._copy_file(end.file, pair.copy, name):
                    self._drop(stack, name, "special_file")
                    return
            else:
                text = relative_link([d.name for d in stack[1:]], end.parts)
                if len(os.fsencode(text)) >= PATH_MAX:
                    self._drop(stack, name, "link_too_long")
                    return
                os.symlink(text, name, dir_fd=pair.copy)
                self._own(name, pair.copy)
        self.report.links += 1

    def _copy_file(self, source: int, copy_dir: int, name: str) -> bool:
        """Copy the file open as ``source`` to ``name`` in ``copy_dir``, data extents only (holes
        stay holes); False when it is not a regular file."""
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            return False
        if min(info.st_size, info.st_blocks * 512) > self.max_bytes - self.report.bytes:
            raise self._too_large()
        target = os.open(name, _CREATE_FLAGS, 0o600, dir_fd=copy_dir)
        try:
            if self.owner is not None:
                os.fchown(target, *self.owner)
            os.fchmod(target, _permissions(info.st_mode) | stat.S_IRUSR)
            end = 0
            for start, stop in _data_extents(source):
                end = self._copy_range(source, target, start, stop)
            os.ftruncate(target, max(end, os.fstat(source).st_size))
        finally:
            os.close(target)
        return True

    def _copy_range(self, source: int, target: int, start: int, stop: int | None) -> int:
        """Copy ``start``..``stop`` (end of file for None) to the same offsets; returns where it
        stopped. The budget is checked per chunk: the file may be growing while it is read."""
        offset = start
        while stop is None or offset < stop:
            chunk = os.pread(source, READ_CHUNK if stop is None else min(READ_CHUNK, stop - offset), offset)
            if not chunk:
                break
            if self.report.bytes + len(chunk) > self.max_bytes:
                raise self._too_large()
            view = memoryview(chunk)
            while view:
                view = view[os.pwrite(target, view, offset + len(chunk) - len(view)) :]
            self.report.bytes += len(chunk)
            offset += len(chunk)
        return offset

    def _too_large(self) -> WorkspaceError:
        return WorkspaceError(f"workspace holds more than {self.max_bytes} bytes", reason="workspace_too_large")

    def _own(self, name: str, directory: int) -> None:
        if self.owner is not None:
            os.chown(name, *self.owner, dir_fd=directory, follow_symlinks=False)

    def _drop(self, stack: list[_Dir], name: str, reason: str) -> None:
        parts = [d.name for d in stack[1:]] + ([name] if name else [])
        self.report.drop(os.fsencode("/".join(parts) or ".").decode("utf-8", "backslashreplace"), reason)


def _data_extents(fd: int) -> Iterator[tuple[int, int | None]]:
    """(start, stop) of each run of data, holes skipped; a single run to the end of the file
    where the filesystem cannot tell data from holes."""
    offset = 0
    while True:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
            stop = os.lseek(fd, start, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # no data at or after offset
                return
            if offset == 0 and exc.errno in (errno.EINVAL, errno.EOPNOTSUPP):
                yield 0, None
                return
            raise
        yield start, stop
        offset = stop


def _permissions(mode: int) -> int:
    # no setuid, setgid or sticky bit: a copy made by root must not hand out root
    return stat.S_IMODE(mode) & 0o777
