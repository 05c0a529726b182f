"""The artifact store Protocol. Keys are '/'-separated; writes are atomic (all or nothing)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from skillgym_core.ids import sha256_hex


@runtime_checkable
class Store(Protocol):
    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        """Write ``data`` at ``key`` atomically; return the key."""
        ...

    def get_bytes(self, key: str) -> bytes:
        """Raise :class:`~skillgym_core.errors.ArtifactNotFound` if absent."""
        ...

    def exists(self, key: str) -> bool: ...

    def list(self, prefix: str = "") -> Iterator[str]:
        """Every key that starts with ``prefix``, sorted."""
        ...

    def delete(self, key: str) -> None: ...

    def describe(self) -> str:
        """Where this store lives, for logs and summaries."""
        ...


def content_key(prefix: str, data: bytes, suffix: str = "") -> str:
    """A content-addressed key: the same bytes always land at the same key."""
    return f"{prefix.rstrip('/')}/{sha256_hex(data)}{suffix}"


def put_json(store: Store, key: str, value: Any) -> str:
    return store.put_bytes(
        key, json.dumps(value, indent=2, sort_keys=True, default=str).encode(), "application/json"
    )


def get_json(store: Store, key: str) -> Any:
    return json.loads(store.get_bytes(key))
