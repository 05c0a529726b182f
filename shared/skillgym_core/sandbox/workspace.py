"""Host-side handling of directories a sandboxed command could have written.

Nothing here follows a symlink or opens anything but a regular file: a workspace written by
untrusted code may hold links to host files, FIFOs that block a reader forever, devices, or
more data than the host wants to copy. Links are copied as links (they resolve inside the
next sandbox, not on the host); special files are dropped and reported."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_core.errors import SandboxError

READ_CHUNK = 1 << 20


class WorkspaceError(SandboxError):
    """A workspace the host refuses to copy or read (too big, or a path escaping it)."""

    reason = "workspace_unsafe"


@dataclass
class CopyReport:
    files: int = 0
    bytes: int = 0
    links: int = 0
    skipped: list[str] = field(default_factory=list)


def safe_copy_tree(src: Path, dst: Path, *, max_bytes: int, max_files: int) -> CopyReport:
    """Copy ``src`` into ``dst`` (created) without following links or opening special files."""
    report = CopyReport()
    dst.mkdir(parents=True, exist_ok=True)
    _copy_dir(src, dst, src, report, max_bytes, max_files)
    return report


def _copy_dir(src: Path, dst: Path, root: Path, report: CopyReport, max_bytes: int, max_files: int) -> None:
    with os.scandir(src) as entries:
        for entry in entries:
            relative = os.path.relpath(entry.path, root)
            target = dst / entry.name
            info = entry.stat(follow_symlinks=False)
            report.files += 1
            if report.files > max_files:
                raise WorkspaceError(f"workspace has more than {max_files} entries", reason="workspace_too_large")
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(entry.path), target)
                report.links += 1
            elif stat.S_ISDIR(info.st_mode):
                target.mkdir()
                _copy_dir(Path(entry.path), target, root, report, max_bytes, max_files)
                os.chmod(target, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
            elif stat.S_ISREG(info.st_mode):
                report.bytes += info.st_size
                if report.bytes > max_bytes:
                    raise WorkspaceError(f"workspace holds more than {max_bytes} bytes", reason="workspace_too_large")
                _copy_regular(entry.path, target, stat.S_IMODE(info.st_mode))
            else:
                report.skipped.append(relative)


def _copy_regular(src: str, dst: Path, mode: int) -> None:
    source = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(source).st_mode):
            raise WorkspaceError(f"{src} changed type while copying")
        target = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode | stat.S_IRUSR)
        try:
            while chunk := os.read(source, READ_CHUNK):
                os.write(target, chunk)
        finally:
            os.close(target)
    finally:
        os.close(source)


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
