"""Trees a sandboxed run may leave behind that ``shutil.rmtree`` cannot remove."""

from __future__ import annotations

import os
from pathlib import Path


def make_chain(root: Path, depth: int, leaf: bytes | None = b"bottom") -> None:
    """``root/d/d/.../d/leaf`` ``depth`` directories deep (longer than any path the kernel takes,
    deeper than Python's recursion limit); no ``leaf`` file when ``leaf`` is None."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        if leaf is not None:
            leaf_fd = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(leaf_fd, leaf)
            os.close(leaf_fd)
    finally:
        os.close(fd)


def deep_tree(root: Path, depth: int = 1200) -> None:
    """Nest ``depth`` empty directories below ``root``."""
    make_chain(root, depth, leaf=None)
