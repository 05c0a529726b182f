"""Writes that do not wait: ``put_bytes`` hands the object to a small thread pool and returns,
so a producer of many small artifacts (ingest at crawl scale) overlaps its store round trips
and fsyncs. :meth:`WriteBehindStore.wait` returns once every write so far has landed, raising
the first failure; callers announce artifacts (publish their events) only after it. Reads wait
too, so this store never answers with less than was written to it."""

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
        self._pending: list[Future[str]] = []
        self.written = 0

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        self._room.acquire()
        try:
            future = self._pool.submit(self.inner.put_bytes, key, data, content_type)
        except BaseException:
            self._room.release()
            raise
        future.add_done_callback(lambda _: self._room.release())
        with self._lock:
            self._pending.append(future)
        return key

    def wait(self) -> None:
        """Block until every write submitted so far is done; raise the first that failed (the
        others still finish)."""
        with self._lock:
            pending, self._pending = self._pending, []
        first: BaseException | None = None
        for future in pending:
            error = future.exception()
            if error is None:
                self.written += 1
            elif first is None:
                first = error
        if first is not None:
            raise first

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
