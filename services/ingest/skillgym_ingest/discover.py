"""Find skill folders in a tree: any folder holding ``SKILL.md`` or ``skill.md``; also archives."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from skillgym_ingest.archives import is_archive_name
from skillgym_ingest.loader import IGNORED_DIRS, SKILL_FILENAMES


def find_skill_dirs(root: Path, *, archives: bool = False) -> Iterator[Path]:
    """Yield skill folders (and, with ``archives``, archive files outside them) below ``root``.

    Sorted order; ``root`` itself may be a skill. A skill folder's subfolders belong to it and
    are not searched; links are not followed."""
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                names = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        files = [e for e in names if e.is_file(follow_symlinks=False)]
        if any(e.name in SKILL_FILENAMES for e in files):
            yield current
            continue
        if archives:
            yield from (Path(e.path) for e in files if is_archive_name(e.name))
        subdirs = [
            Path(e.path) for e in names
            if e.is_dir(follow_symlinks=False) and e.name not in IGNORED_DIRS
        ]
        stack.extend(reversed(subdirs))


def git_revision(root: Path) -> str | None:
    """The commit a checkout is at, read from ``.git`` files (git is never run)."""
    git_dir = root / ".git"
    try:
        if git_dir.is_file():  # worktree or submodule: "gitdir: <path>"
            pointer = git_dir.read_text().strip()
            if not pointer.startswith("gitdir:"):
                return None
            git_dir = (root / pointer.split(":", 1)[1].strip()).resolve()
        head = (git_dir / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head.split(":", 1)[1].strip()
        ref_file = git_dir / ref
        if ref_file.is_file():
            return ref_file.read_text().strip() or None
        packed = git_dir / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
    except OSError:
        return None
    return None
