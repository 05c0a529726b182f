"""One thread that does every run's periodic chores, instead of a timer per run: woken early when
a run finishes (a queued run may start) and otherwise every ``interval_s``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Housekeeper:
    def __init__(self, chores: Callable[[], None], interval_s: float) -> None:
        self.chores = chores
        self.interval_s = interval_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sandbox-housekeeping", daemon=True)

    def start(self) -> Housekeeper:
        self._thread.start()
        return self

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.interval_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.chores()
            except Exception:
                log.exception("sandbox housekeeping failed; it runs again in %.1f s", self.interval_s)
