"""Publishing many records without waiting for each acknowledgement: records are collected and
handed to ``Bus.publish_many`` a batch at a time (one flush, every acknowledgement checked)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import TracebackType

from skillgym_core.bus.base import Bus, Headers, Outgoing

log = logging.getLogger(__name__)


class BatchingPublisher:
    """Collects records and publishes every ``batch_size`` of them together, and the rest on
    :meth:`flush` or when the ``with`` block ends (also after an error). A failed batch raises and
    stays pending, so a later flush publishes it again (content-derived ids make repeats
    harmless)."""

    def __init__(self, bus: Bus, batch_size: int = 1000, *, before_flush: Callable[[], None] | None = None) -> None:
        """``before_flush`` runs before each batch goes out (waiting for the artifacts its events
        announce to be stored, say); if it raises, the batch stays pending."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.bus = bus
        self.batch_size = batch_size
        self.before_flush = before_flush
        self.published = 0
        self._pending: list[Outgoing] = []

    def add(self, topic: str, key: str | None, value: bytes, headers: Headers = ()) -> None:
        self._pending.append(Outgoing(topic, key, value, headers))
        if len(self._pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        if self.before_flush is not None:
            self.before_flush()
        self.bus.publish_many(self._pending)
        self.published += len(self._pending)
        self._pending = []

    @property
    def pending(self) -> int:
        return len(self._pending)

    def __enter__(self) -> BatchingPublisher:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if kind is None:
            self.flush()
            return
        try:  # what was decided before the failure still goes out; the failure is what is raised
            self.flush()
        except Exception:
            log.warning("records left unpublished after a failure", extra={"records": self.pending}, exc_info=True)
