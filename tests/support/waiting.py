"""Polling until something holds, for tests that watch a process or a server settle."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(check: Callable[[], Any], timeout_s: float = 15.0, what: str = "condition", *, every_s: float = 0.05) -> Any:
    """The first truthy value ``check`` returns within ``timeout_s``; AssertionError otherwise."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"timed out waiting for {what}")
