"""Corpus-level dedup state: the LSH index over MinHash signatures and the exact-hash index.

Everything that grows with the corpus (tables, signatures, representative ids) lives in
:mod:`disk_table` structures, so deciding skill number ten million takes the same resident
memory as deciding skill number ten thousand."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from skillgym_ingest.disk_table import BucketTable, IdLog, RecordLog
from skillgym_ingest.minhash import band_keys
from skillgym_ingest.settings import IngestSettings

__all__ = ["BucketTable", "ExactIndex", "IdLog", "Lookup", "NearDuplicateIndex", "RecordLog"]


class Lookup(NamedTuple):
    found: tuple[str, float] | None  # representative id and estimated similarity
    signature: np.ndarray
    keys: list[int]
    probed: tuple[list[int], list[int]]


class NearDuplicateIndex:
    """Answers "is this close to a skill seen before?" and remembers the skill when it is not.

    ``threshold`` defaults to ``near_dup_threshold``; the script index passes its own."""

    def __init__(self, settings: IngestSettings, directory: Path | None = None, threshold: float | None = None) -> None:
        self.threshold = settings.near_dup_threshold if threshold is None else threshold
        self.bands = settings.minhash_bands
        self.perms = settings.minhash_perms
        directory = directory or settings.dedup_dir
        self._table = BucketTable(settings.dedup_table_slots, directory)
        self._signatures = RecordLog(self.perms * 4, directory)
        self._ids = IdLog(directory)

    def __len__(self) -> int:
        return len(self._ids)

    def query(self, sig: np.ndarray, keys: np.ndarray | None = None) -> tuple[str, float] | None:
        return self._query(sig, self._keys(sig, keys))[0]

    def _keys(self, sig: np.ndarray, keys: np.ndarray | None) -> list[int]:
        return (band_keys(sig, self.bands) if keys is None else keys).tolist()

    def _query(
        self, sig: np.ndarray, keys: list[int]
    ) -> tuple[tuple[str, float] | None, tuple[list[int], list[int]]]:
        hits, slots = self._table.probe(keys)
        best: tuple[int, float] | None = None
        for index in sorted({hit for hit in hits if hit >= 0}):
            stored = np.frombuffer(self._signatures.read(index), dtype=np.uint32)
            similarity = int(np.count_nonzero(stored == sig)) / self.perms
            if similarity >= self.threshold and (best is None or similarity > best[1]):
                best = (index, similarity)
        found = None if best is None else (self._ids.get(best[0]), best[1])
        return found, (hits, slots)

    def add(self, skill_id: str, sig: np.ndarray, keys: np.ndarray | None = None) -> None:
        key_list = self._keys(sig, keys)
        self._add(skill_id, sig, key_list, self._table.probe(key_list))

    def _add(self, skill_id: str, sig: np.ndarray, keys: list[int], probed: tuple[list[int], list[int]]) -> None:
        index = self._ids.append(skill_id)
        self._signatures.append(np.ascontiguousarray(sig, dtype=np.uint32).tobytes())
        self._table.fill(keys, [index] * len(keys), *probed)

    def lookup(self, sig: np.ndarray, keys: np.ndarray | None = None) -> Lookup:
        """The best match, if any, and what :meth:`remember` needs to add the skill without probing again."""
        key_list = self._keys(sig, keys)
        found, probed = self._query(sig, key_list)
        return Lookup(found, sig, key_list, probed)

    def remember(self, skill_id: str, looked_up: Lookup) -> None:
        self._add(skill_id, looked_up.signature, looked_up.keys, looked_up.probed)

    def query_or_add(
        self, skill_id: str, sig: np.ndarray, keys: np.ndarray | None = None
    ) -> tuple[str, float] | None:
        key_list = self._keys(sig, keys)
        found, probed = self._query(sig, key_list)
        if found is None:
            self._add(skill_id, sig, key_list, probed)
        return found

    def close(self) -> None:
        self._table.close()
        self._signatures.close()
        self._ids.close()


class ExactIndex:
    """Normalised content hash -> representative skill id, 8 bytes of hash per key."""

    def __init__(self, settings: IngestSettings, directory: Path | None = None) -> None:
        directory = directory or settings.dedup_dir
        self._table = BucketTable(settings.dedup_table_slots // 8, directory)
        self._ids = IdLog(directory)

    @staticmethod
    def key(normalized_hash: str) -> int:
        return int(normalized_hash[:16], 16) | 1

    def get(self, normalized_hash: str) -> str | None:
        number = self._table.get(self.key(normalized_hash))
        return None if number < 0 else self._ids.get(number)

    def put(self, normalized_hash: str, representative: str) -> None:
        """Map the hash to ``representative`` unless it is mapped already."""
        key = [self.key(normalized_hash)]
        found, slots = self._table.probe(key)
        if found[0] < 0:
            self._table.fill(key, [self._ids.append(representative)], found, slots)

    def close(self) -> None:
        self._table.close()
        self._ids.close()
