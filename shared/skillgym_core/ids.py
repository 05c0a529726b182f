"""Content-derived identifiers: the same content always yields the same id."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no whitespace, so equal values hash equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_id(prefix: str, value: Any, length: int = 16) -> str:
    """An id such as ``task-3f2a…`` derived from the canonical JSON of ``value``."""
    return f"{prefix}-{sha256_hex(canonical_json(value))[:length]}"


def hash_files(files: Iterable[tuple[str, bytes]]) -> str:
    """Hash a set of (relative path, content) pairs independent of their order."""
    digest = hashlib.sha256()
    for rel, data in sorted(files, key=lambda item: item[0]):
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def hash_tree(root: Path) -> str:
    """Hash every regular file below ``root`` (symlinks are not followed)."""
    return hash_files(
        (path.relative_to(root).as_posix(), path.read_bytes())
        for path in root.rglob("*")
        if path.is_file() and not path.is_symlink()
    )
