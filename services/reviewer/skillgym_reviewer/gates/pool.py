"""Running verifier probes side by side: each is a sandboxed run that mostly waits on process
start-up, so a few at once finish far sooner than one after another."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def default_workers() -> int:
    return max(2, min(8, 2 * (os.cpu_count() or 1)))


def parallel_map(function: Callable[[Item], Result], items: Sequence[Item], workers: int) -> list[Result]:
    """``[function(item) for item in items]``, up to ``workers`` at a time, in order."""
    if workers <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items)), thread_name_prefix="probe") as pool:
        return list(pool.map(function, items))
