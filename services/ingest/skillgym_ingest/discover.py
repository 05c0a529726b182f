"""Find skill folders in a tree: any folder holding ``SKILL.md`` or ``skill.md``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from skillgym_ingest.loader import IGNORED_DIRS, SKILL_FILENAMES


def is_skill_dir(path: Path) -> bool:
    return any(os.path.isfile(path / name) and not os.path.islink(path / name) for name in SKILL_FILENAMES)


def find_skill_dirs(root: Path) -> Iterator[Path]:
    """Yield skill folders below ``root`` (``root`` included) in sorted order.

    A skill folder's own subfolders belong to it and are not searched; links are not followed."""
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                names = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        files = {e.name for e in names if e.is_file(follow_symlinks=False)}
        if any(name in files for name in SKILL_FILENAMES):
            yield current
            continue
        subdirs = [
            Path(e.path) for e in names
            if e.is_dir(follow_symlinks=False) and e.name not in IGNORED_DIRS
        ]
        stack.extend(reversed(subdirs))
