"""Stream stored runs through measurement, overlapping tokenization with reading.

The main thread reads and parses the next documents and extracts their text while tokenizer
threads (tiktoken releases the GIL) count tokens of the previous ones. At most a few documents'
texts are in flight, so memory does not grow with the number of trajectories."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from skillgym_core.store.base import Store

from skillgym_sampler.report.source import iter_runs
from skillgym_sampler.report.stats import TrajectoryStats, split_text

REFERENCE_HARNESSES = ("oracle", "nop")


@dataclass
class StreamCounts:
    reference_runs: int = 0
    passed_without_trajectory: int = 0


def _count_all(texts: dict[str, str], count: Callable[[str], int]) -> dict[str, int]:
    return {name: count(text) for name, text in texts.items()}


def measured_runs(
    store: Store,
    count: Callable[[str], int],
    counts: StreamCounts,
    *,
    include_reference: bool = False,
    workers: int = 1,
) -> Iterator[tuple[dict[str, Any], TrajectoryStats | None]]:
    """Every non-reference run's record with the stats of its trajectory (passed runs only), in order."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tokenize") if workers > 0 else None
    window = max(2, 2 * workers + 1)
    pending: deque[tuple[dict[str, Any], Any, Future[dict[str, int]] | dict[str, int] | None]] = deque()

    def finish() -> tuple[dict[str, Any], TrajectoryStats | None]:
        record, shape, tokens = pending.popleft()
        if tokens is None:
            return record, None
        resolved = tokens.result() if isinstance(tokens, Future) else tokens
        steps, messages, calls, shares = shape
        return record, TrajectoryStats(steps=steps, messages=messages, tool_calls=calls, tokens=resolved,
                                       message_shares=shares)

    try:
        for record, doc in iter_runs(store):
            if record.get("harness") in REFERENCE_HARNESSES and not include_reference:
                counts.reference_runs += 1
                continue
            if not record.get("passed"):
                pending.append((record, None, None))
            elif doc is None:
                counts.passed_without_trajectory += 1
                pending.append((record, None, None))
            else:
                texts, steps, messages, calls, shares = split_text(doc)
                del doc
                tokens = pool.submit(_count_all, texts, count) if pool else _count_all(texts, count)
                pending.append((record, (steps, messages, calls, shares), tokens))
            while len(pending) > window:
                yield finish()
        while pending:
            yield finish()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
