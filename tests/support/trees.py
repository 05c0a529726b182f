"""Trees a sandboxed run may leave behind that ``shutil.rmtree`` cannot remove."""

from __future__ import annotations

import os
from pathlib import Path


def deep_tree(root: Path, depth: int = 1200) -> None:
    """Nest ``depth`` directories below ``root``: deeper than Python's recursion limit."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
