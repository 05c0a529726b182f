"""Read one skill folder into memory within caps, without following links out of it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from skillgym_ingest.errors import SkillReadError

SKILL_FILENAMES = ("SKILL.md", "skill.md")
IGNORED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})


@dataclass(frozen=True)
class LoadedFile:
    path: str
    size: int
    sha256: str
    data: bytes | None  # None when larger than the scan cap (hashed, not kept)


@dataclass(frozen=True)
class LinkEntry:
    path: str
    target: str
    escapes: bool


@dataclass
class SkillFolder:
    root: Path
    source: str
    files: list[LoadedFile] = field(default_factory=list)
    links: list[LinkEntry] = field(default_factory=list)
    skipped_dirs: list[str] = field(default_factory=list)
    truncated: bool = False
    total_bytes: int = 0

    @property
    def name(self) -> str:
        return self.root.name

    def skill_md(self) -> LoadedFile | None:
        by_path = {f.path: f for f in self.files}
        for candidate in SKILL_FILENAMES:
            if candidate in by_path:
                return by_path[candidate]
        return None

    def file_count(self) -> int:
        return len(self.files)


def load_folder(root: Path, source: str, *, max_files: int, max_bytes: int, max_file_bytes: int) -> SkillFolder:
    """Load every regular file below ``root``; VCS and cache folders are skipped.

    Listing stops after ``max_files`` files (``truncated``); a folder above ``max_bytes``
    raises :class:`SkillReadError` since even hashing it would be unbounded work. The walk is
    the one ``os.walk`` makes (top-down, names sorted, an unreadable subfolder skipped), done
    with ``os.scandir`` so that no file needs a second ``stat``."""
    folder = SkillFolder(root=root, source=source)
    limits = (max_files, max_bytes, max_file_bytes)
    try:
        _load_dir(folder, str(root), "", limits, top=True)
    except _Truncated:
        folder.truncated = True
    except OSError as exc:
        raise SkillReadError(f"cannot read skill folder: {exc}", path=str(root)) from exc
    return folder


class _Truncated(Exception):
    pass


def _load_dir(folder: SkillFolder, path: str, rel_dir: str, limits: tuple[int, int, int], *, top: bool = False) -> None:
    max_files, max_bytes, max_file_bytes = limits
    try:
        with os.scandir(path) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        if top:
            return  # os.walk reports nothing for a root it cannot list
        return
    dirs: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        (dirs if _is_dir(entry) else files).append(entry)
    kept = []
    for entry in dirs:
        if entry.is_symlink():
            folder.links.append(_link(entry.path, folder.root))
        elif entry.name in IGNORED_DIRS:
            folder.skipped_dirs.append(_rel(rel_dir, entry.name))
        else:
            kept.append(entry)
    for entry in files:
        rel = _rel(rel_dir, entry.name)
        if entry.is_symlink():
            folder.links.append(_link(entry.path, folder.root))
            continue
        if len(folder.files) >= max_files:
            raise _Truncated
        folder.files.append(_read(entry.path, rel, max_file_bytes))
        folder.total_bytes += folder.files[-1].size
        if folder.total_bytes > max_bytes:
            raise SkillReadError(
                "skill folder is larger than the size cap", reason="skill_too_large",
                path=str(folder.root), limit=max_bytes,
            )
    for entry in kept:
        _load_dir(folder, entry.path, _rel(rel_dir, entry.name), limits)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    # os.walk sorts with is_dir() following links: a link to a folder is listed with folders.
    try:
        return entry.is_dir()
    except OSError:
        return False


def _rel(rel_dir: str, name: str) -> str:
    return f"{rel_dir}/{name}" if rel_dir else name


def _read(full: str, rel: str, max_file_bytes: int) -> LoadedFile:
    fd = os.open(full, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size <= max_file_bytes:
            data = _read_all(fd, size)
            return LoadedFile(rel, len(data), hashlib.sha256(data).hexdigest(), data)
        digest = hashlib.sha256()
        for block in iter(lambda: os.read(fd, 1 << 20), b""):
            digest.update(block)
        return LoadedFile(rel, size, digest.hexdigest(), None)
    finally:
        os.close(fd)


def _read_all(fd: int, size: int) -> bytes:
    """Everything left in ``fd`` (which may differ from the ``stat`` size of a changing file)."""
    data = os.read(fd, size + 1) if size else b""
    if not data or len(data) <= size:
        rest = os.read(fd, 1 << 16)
        if not rest:
            return data
        chunks = [data, rest]
    else:
        chunks = [data]
    while block := os.read(fd, 1 << 20):
        chunks.append(block)
    return b"".join(chunks)


def _link(full: str, root: Path) -> LinkEntry:
    real_root = os.path.realpath(root)
    target = os.readlink(full)
    resolved = os.path.realpath(full)
    escapes = not (resolved == real_root or resolved.startswith(real_root + os.sep))
    return LinkEntry(os.path.relpath(full, root).replace(os.sep, "/"), target, escapes)
