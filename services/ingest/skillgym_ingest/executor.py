"""Run per-skill analysis in worker processes, results in input order, bounded work in flight."""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

from skillgym_core.archive import pack_dir

from skillgym_ingest.analyze import Analysis, analyze_path
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.units import FailedUnit, FolderUnit, Unit

Result = tuple[Analysis, bytes | None]


def analyze_chunk(units: list[Unit], settings: IngestSettings, pack: bool) -> list[Result]:
    out: list[Result] = []
    for unit in units:
        if isinstance(unit, FailedUnit):
            out.append((Analysis(unit.record, None), None))
            continue
        analysis = analyze_path(unit.root, unit.source, settings)
        packed = None
        # Pack in the worker only what can still be accepted; duplicates are rare enough.
        if pack and analysis.root is not None and not analysis.record.reasons:
            packed = pack_dir(analysis.root)
        out.append((analysis, packed))
    return out


class AnalysisPool:
    """Lazily starts worker processes the first time there is more than one chunk of work."""

    def __init__(self, settings: IngestSettings) -> None:
        self.settings = settings
        self.workers = settings.workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> AnalysisPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def map(self, units: Iterable[Unit], *, pack: bool) -> Iterator[Result]:
        chunks = _chunked(iter(units), self.settings.chunk_size)
        first = next(chunks, None)
        if first is None:
            return
        second = next(chunks, None)
        if second is None or self.workers <= 1:
            for chunk in itertools.chain([first], [second] if second else [], chunks):
                yield from analyze_chunk(chunk, self.settings, pack)
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        pending: deque[Future[list[Result]]] = deque()
        for chunk in itertools.chain([first, second], chunks):
            pending.append(self._pool.submit(analyze_chunk, chunk, self.settings, pack))
            if len(pending) >= self.workers * 3:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


def _chunked(units: Iterator[Unit], size: int) -> Iterator[list[Unit]]:
    while chunk := list(itertools.islice(units, size)):
        yield chunk


__all__ = ["AnalysisPool", "FailedUnit", "FolderUnit", "analyze_chunk"]
