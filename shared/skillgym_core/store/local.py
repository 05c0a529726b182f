"""A store on the local filesystem. Atomic via write-to-temp + rename in the same directory;
durable once ``put_bytes`` returns (the file is fsync'd), or, for writers of many small objects
(see :class:`~skillgym_core.store.write_behind.WriteBehindStore`), after ``put_unsynced`` calls
once :meth:`LocalStore.sync` returns: one ``syncfs`` instead of an fsync per object."""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import cast

from skillgym_core.errors import ArtifactNotFound, SkillGymError, StoreError

MADE_DIRS_REMEMBERED = 65_536


class LocalStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._made_dirs: set[Path] = set()
        self._temp_names = itertools.count()

    def _path(self, key: str) -> Path:
        rel = PurePosixPath(key)
        if not key or rel.is_absolute() or ".." in rel.parts:
            raise StoreError(f"invalid store key: {key!r}", key=key)
        return self.root.joinpath(*rel.parts)

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        return self._write(key, data, durable=True)

    def put_unsynced(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        """Write ``key`` atomically but leave it to :meth:`sync` to make it durable."""
        return self._write(key, data, durable=False)

    def sync(self) -> None:
        """Make every object written so far durable (``syncfs`` of the store's filesystem)."""
        descriptor = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if _syncfs()(descriptor) != 0:
                code = ctypes.get_errno()
                raise StoreError(f"syncfs {self.root}: {os.strerror(code)}", errno=code)
        finally:
            os.close(descriptor)

    def _write(self, key: str, data: bytes, *, durable: bool) -> str:
        path = self._path(key)
        parent = path.parent
        if parent not in self._made_dirs:
            parent.mkdir(parents=True, exist_ok=True)
            if len(self._made_dirs) >= MADE_DIRS_REMEMBERED:  # a long-lived service stays bounded
                self._made_dirs.clear()
            self._made_dirs.add(parent)
        temp = parent / f".tmp-{path.name}.{threading.get_ident()}.{next(self._temp_names)}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            descriptor = os.open(temp, flags, 0o600)
        except FileNotFoundError:  # the directory went away since it was made
            parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(temp, flags, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
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
        """Every key starting with ``prefix``, sorted; only the folder the prefix names is walked."""
        folder = prefix.rpartition("/")[0]
        start = self._path(folder) if folder else self.root
        if not start.is_dir():
            return
        keys = (
            path.relative_to(self.root).as_posix()
            for path in start.rglob("*")
            if path.is_file() and not path.name.startswith(".tmp-")
        )
        yield from sorted(key for key in keys if key.startswith(prefix))

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def describe(self) -> str:
        return f"file://{self.root}"


@lru_cache(maxsize=1)
def _syncfs() -> Callable[[int], int]:
    libc = ctypes.CDLL(None, use_errno=True)
    syncfs = libc.syncfs
    syncfs.argtypes = [ctypes.c_int]
    syncfs.restype = ctypes.c_int
    return cast(Callable[[int], int], syncfs)


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
