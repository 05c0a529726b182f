"""Run per-skill analysis in worker processes, results in input order, bounded work in flight.

Workers send back :class:`AnalyzedChunk` objects: record JSON as bytes and the dedup inputs of a
whole chunk as two numpy matrices, so the main process unpickles a few buffers per chunk
instead of a tree of models per skill."""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

import numpy as np
from skillgym_core.archive import pack_dir

from skillgym_ingest.analyze import Analysis, analyze_path
from skillgym_ingest.minhash import band_keys
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.summary import AnalyzedChunk, SkillSummary
from skillgym_ingest.units import FailedUnit, FolderUnit, Unit


def analyze_chunk(units: list[Unit], settings: IngestSettings, pack: bool) -> AnalyzedChunk:
    chunk = AnalyzedChunk()
    signatures: list[np.ndarray] = []
    script_signatures: list[np.ndarray] = []
    for unit in units:
        if isinstance(unit, FailedUnit):
            analysis = Analysis(unit.record, None)
        else:
            analysis = analyze_path(unit.root, unit.source, settings)
        packed = None
        # Pack in the worker only what can still be accepted; duplicates are rare enough.
        if pack and analysis.root is not None and not analysis.record.reasons:
            packed = pack_dir(analysis.root)
        row = script_row = -1
        if analysis.normalized_hash is not None and analysis.signature is not None:
            row = len(signatures)
            signatures.append(analysis.signature)
        if analysis.normalized_hash is not None and analysis.script_signature is not None:
            script_row = len(script_signatures)
            script_signatures.append(analysis.script_signature)
        chunk.skills.append(SkillSummary.of(analysis.record, analysis.root, packed, row, script_row))
    if signatures:
        chunk.signatures = np.stack(signatures)
        chunk.band_keys = band_keys(chunk.signatures, settings.minhash_bands)
    if script_signatures:
        chunk.script_signatures = np.stack(script_signatures)
        chunk.script_band_keys = band_keys(chunk.script_signatures, settings.minhash_bands)
    return chunk


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

    def map(self, units: Iterable[Unit], *, pack: bool) -> Iterator[AnalyzedChunk]:
        chunks = _chunked(iter(units), self.settings.chunk_size)
        first = next(chunks, None)
        if first is None:
            return
        second = next(chunks, None)
        if second is None or self.workers <= 1:
            for chunk in itertools.chain([first], [second] if second else [], chunks):
                yield analyze_chunk(chunk, self.settings, pack)
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        pending: deque[Future[AnalyzedChunk]] = deque()
        for chunk in itertools.chain([first, second], chunks):
            pending.append(self._pool.submit(analyze_chunk, chunk, self.settings, pack))
            if len(pending) >= self.workers * 3:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _chunked(units: Iterator[Unit], size: int) -> Iterator[list[Unit]]:
    while chunk := list(itertools.islice(units, size)):
        yield chunk


__all__ = ["AnalysisPool", "FailedUnit", "FolderUnit", "analyze_chunk"]
