"""A store on the local filesystem. Atomic via write-to-temp + rename in the same directory."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from skillgym_core.errors import ArtifactNotFound, SkillGymError, StoreError


class LocalStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        rel = PurePosixPath(key)
        if not key or rel.is_absolute() or ".." in rel.parts:
            raise StoreError(f"invalid store key: {key!r}", key=key)
        return self.root.joinpath(*rel.parts)

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return key

    def get_bytes(self, key: str) -> bytes:
        path = self._path(key)
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise ArtifactNotFound(f"no artifact at {key}", key=key) from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str = "") -> Iterator[str]:
        keys = (
            path.relative_to(self.root).as_posix()
            for path in self.root.rglob("*")
            if path.is_file() and not path.name.startswith(".tmp-")
        )
        yield from sorted(key for key in keys if key.startswith(prefix))

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def describe(self) -> str:
        return f"file://{self.root}"


def open_run_store(path: Path, marker: str, error: type[SkillGymError]) -> LocalStore:
    """The local store of a run directory (``DIR/store``) or of a store root that holds
    ``marker/``; never creates one. ``error`` (reason ``no_store``) says which is missing."""
    if not path.is_dir():
        raise error(f"{path}: no such run directory or store root", reason="no_store", path=str(path))
    if (path / "store").is_dir():
        return LocalStore(path / "store")
    if not (path / marker).is_dir():
        raise error(f"{path} holds no store (no store/ or {marker}/ below it)", reason="no_store", path=str(path))
    return LocalStore(path)
