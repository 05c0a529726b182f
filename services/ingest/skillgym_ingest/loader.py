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
    raises :class:`SkillReadError` since even hashing it would be unbounded work."""
    folder = SkillFolder(root=root, source=source)
    real_root = os.path.realpath(root)
    try:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            rel_dir = os.path.relpath(dirpath, root)
            kept = []
            for name in sorted(dirnames):
                full = os.path.join(dirpath, name)
                if os.path.islink(full):
                    folder.links.append(_link(full, root, real_root))
                elif name in IGNORED_DIRS:
                    folder.skipped_dirs.append(_rel(rel_dir, name))
                else:
                    kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                rel = _rel(rel_dir, name)
                if os.path.islink(full):
                    folder.links.append(_link(full, root, real_root))
                    continue
                if len(folder.files) >= max_files:
                    folder.truncated = True
                    return folder
                folder.files.append(_read(full, rel, max_file_bytes))
                folder.total_bytes += folder.files[-1].size
                if folder.total_bytes > max_bytes:
                    raise SkillReadError(
                        "skill folder is larger than the size cap", reason="skill_too_large",
                        path=str(root), limit=max_bytes,
                    )
    except OSError as exc:
        raise SkillReadError(f"cannot read skill folder: {exc}", path=str(root)) from exc
    return folder


def _rel(rel_dir: str, name: str) -> str:
    return name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")


def _read(full: str, rel: str, max_file_bytes: int) -> LoadedFile:
    with open(full, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= max_file_bytes:
            data = handle.read()
            return LoadedFile(rel, len(data), hashlib.sha256(data).hexdigest(), data)
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        return LoadedFile(rel, size, digest.hexdigest(), None)


def _link(full: str, root: Path, real_root: str) -> LinkEntry:
    target = os.readlink(full)
    resolved = os.path.realpath(full)
    escapes = not (resolved == real_root or resolved.startswith(real_root + os.sep))
    return LinkEntry(os.path.relpath(full, root).replace(os.sep, "/"), target, escapes)
