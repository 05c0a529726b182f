"""Writes that do not wait: ``put_bytes`` hands the object to a small thread pool and returns,
so a producer of many small artifacts (ingest at crawl scale) overlaps its store round trips
and fsyncs. :meth:`WriteBehindStore.wait` returns once every write so far has landed, raising
a failure until that key is written again (so a retried flush can never announce an object
that is not there); callers announce artifacts (publish their events) only after it. Reads wait
too, so this store never answers with less than was written to it. A store that can defer
durability (``put_unsynced`` and ``sync``, as the local store can) is synced once per ``wait``
instead of once per object."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from skillgym_core.store.base import Store


class WriteBehindStore:
    def __init__(self, inner: Store, *, threads: int = 8, max_pending: int = 512) -> None:
        self.inner = inner
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="store-write")
        self._room = threading.BoundedSemaphore(max_pending)  # bounds the memory held by queued objects
        self._lock = threading.Lock()
        self._pending: list[tuple[str, Future[str]]] = []
        self._failed: dict[str, BaseException] = {}
        self._unsynced = False
        self.written = 0
        self._put = getattr(inner, "put_unsynced", inner.put_bytes)
        self._sync = getattr(inner, "sync", None)

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        self._room.acquire()
        try:
            future = self._pool.submit(self._put, key, data, content_type)
        except BaseException:
            self._room.release()
            raise
        future.add_done_callback(lambda _: self._room.release())
        with self._lock:
            self._pending.append((key, future))
        return key

    def wait(self) -> None:
        """Block until every write submitted so far is done, make them durable, and raise the
        first failure of a key not successfully written since (the others still finish)."""
        with self._lock:
            pending, self._pending = self._pending, []
        for key, future in pending:
            error = future.exception()
            if error is None:
                self.written += 1
                self._unsynced = True
                self._failed.pop(key, None)
            else:
                self._failed.setdefault(key, error)
        if self._unsynced and self._sync is not None:
            self._sync()
            self._unsynced = False
        if self._failed:
            raise next(iter(self._failed.values()))

    def get_bytes(self, key: str) -> bytes:
        self.wait()
        return self.inner.get_bytes(key)

    def exists(self, key: str) -> bool:
        self.wait()
        return self.inner.exists(key)

    def list(self, prefix: str = "") -> Iterator[str]:
        self.wait()
        return self.inner.list(prefix)

    def delete(self, key: str) -> None:
        self.wait()
        self.inner.delete(key)

    def describe(self) -> str:
        return f"{self.inner.describe()} (writes behind)"

    def close(self) -> None:
        """Wait for every write, then stop the pool."""
        try:
            self.wait()
        finally:
            self._pool.shutdown(wait=True)

    def __enter__(self) -> WriteBehindStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
