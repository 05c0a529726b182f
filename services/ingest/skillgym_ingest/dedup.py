"""Near-duplicate detection: one-permutation MinHash over word shingles, banded LSH.

Signatures use one-permutation hashing with rotation densification, so a signature costs one
pass over the shingles instead of one pass per permutation. The LSH buckets live in a numpy
open-addressing table (12 bytes a slot) rather than Python dicts, which keeps the index a
few hundred bytes per unique skill."""

from __future__ import annotations

import numpy as np

from skillgym_ingest.settings import IngestSettings

_EMPTY32 = np.uint32(0xFFFFFFFF)
_M1 = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MAX_WORDS = 20000


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, vectorised (wraps modulo 2**64 by design)."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * _MIX1
        x = x ^ (x >> np.uint64(27))
        x = x * _MIX2
        return x ^ (x >> np.uint64(31))


_MAX_BYTES = 256 * 1024
_P = 0x100000001B3
_IS_WORD = np.zeros(256, dtype=bool)
for _lo, _hi in ((48, 58), (65, 91), (97, 123), (128, 256)):
    _IS_WORD[_lo:_hi] = True
_IS_WORD[95] = True
_LOWER = np.arange(256, dtype=np.uint64)
_LOWER[65:91] += 32


def _powers(base: int, count: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.concatenate(([np.uint64(1)], np.cumprod(np.full(count - 1, base, dtype=np.uint64))))


_POWERS = _powers(_P, _MAX_BYTES)
_INVERSE_POWERS = _powers(pow(_P, -1, 1 << 64), _MAX_BYTES)


def word_hashes(text: str) -> np.ndarray:
    """A 64-bit hash per word (runs of letters, digits, ``_`` or non-ASCII bytes), case-folded.

    Vectorised polynomial hashing over the UTF-8 bytes: a word's hash is the difference of two
    prefix sums, rescaled by the inverse power of its start, so it does not depend on position."""
    data = np.frombuffer(text.encode("utf-8", "replace")[:_MAX_BYTES], dtype=np.uint8)
    if data.size == 0:
        return np.zeros(0, dtype=np.uint64)
    edges = np.diff(np.concatenate(([0], _IS_WORD[data].view(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    with np.errstate(over="ignore"):
        prefix = np.concatenate(([np.uint64(0)], np.cumsum(_LOWER[data] * _POWERS[: data.size])))
        raw = (prefix[ends] - prefix[starts]) * _INVERSE_POWERS[starts]
        return _mix64(raw + (ends - starts).astype(np.uint64))


def shingle_hashes(text: str, size: int) -> np.ndarray:
    tokens = word_hashes(text)[:_MAX_WORDS]
    if tokens.size == 0:
        return tokens
    size = min(size, tokens.size)
    with np.errstate(over="ignore"):
        acc = np.zeros(len(tokens) - size + 1, dtype=np.uint64)
        for offset in range(size):
            acc = _mix64(acc * _M1 + tokens[offset : len(tokens) - size + 1 + offset] + np.uint64(offset + 1))
    return np.unique(acc)


def signature(text: str, settings: IngestSettings) -> np.ndarray:
    """A ``minhash_perms``-long uint32 signature; equal slots estimate Jaccard similarity."""
    perms = settings.minhash_perms
    hashes = shingle_hashes(text, settings.shingle_size)
    sig = np.full(perms, _EMPTY32, dtype=np.uint32)
    if hashes.size == 0:
        return sig
    bins = ((hashes >> np.uint64(32)) % np.uint64(perms)).astype(np.int64)
    values = (hashes & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    order = np.lexsort((values, bins))
    first_bins, first_index = np.unique(bins[order], return_index=True)
    sig[first_bins] = values[order][first_index]
    filled = np.flatnonzero(sig != _EMPTY32)
    if filled.size < perms:
        # Rotation densification: an empty bin borrows from the next filled bin to its right,
        # offset by the distance so that borrowed slots only agree when the sources agree.
        empty = np.flatnonzero(sig == _EMPTY32)
        nxt = np.searchsorted(filled, empty) % filled.size
        source = filled[nxt]
        distance = (source - empty) % perms
        with np.errstate(over="ignore"):
            sig[empty] = (_mix64(sig[source].astype(np.uint64) + distance.astype(np.uint64) * _M1)
                          & np.uint64(0xFFFFFFFE)).astype(np.uint32)
    return sig


def band_keys(sig: np.ndarray, bands: int) -> np.ndarray:
    rows = len(sig) // bands
    matrix = sig[: rows * bands].astype(np.uint64).reshape(bands, rows)
    acc = np.arange(1, bands + 1, dtype=np.uint64) * _M1
    for column in range(rows):
        acc = _mix64(acc ^ matrix[:, column])
    return acc | np.uint64(1)  # zero marks an empty slot


class BucketTable:
    """Open addressing (linear probing) from a uint64 key to the first int32 value stored."""

    def __init__(self, capacity: int = 1 << 15) -> None:
        self._keys = np.zeros(capacity, dtype=np.uint64)
        self._values = np.zeros(capacity, dtype=np.int32)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        mask = len(self._keys) - 1
        result = np.full(len(keys), -1, dtype=np.int32)
        active = np.arange(len(keys))
        position = (keys & np.uint64(mask)).astype(np.int64)
        while active.size:
            slot_keys = self._keys[position]
            hit = slot_keys == keys[active]
            result[active[hit]] = self._values[position[hit]]
            pending = ~(hit | (slot_keys == 0))
            active = active[pending]
            position = (position[pending] + 1) & mask
        return result

    def insert(self, keys: np.ndarray, value: int) -> None:
        if (self._size + len(keys)) * 2 > len(self._keys):
            self._grow()
        mask = len(self._keys) - 1
        for key in keys.tolist():
            position = key & mask
            while True:
                current = int(self._keys[position])
                if current == 0:
                    self._keys[position] = key
                    self._values[position] = value
                    self._size += 1
                    break
                if current == key:
                    break
                position = (position + 1) & mask

    def _grow(self) -> None:
        old_keys, old_values = self._keys, self._values
        self._keys = np.zeros(len(old_keys) * 2, dtype=np.uint64)
        self._values = np.zeros(len(old_keys) * 2, dtype=np.int32)
        self._size = 0
        occupied = np.flatnonzero(old_keys)
        for key, value in zip(old_keys[occupied].tolist(), old_values[occupied].tolist(), strict=True):
            self.insert(np.array([key], dtype=np.uint64), value)


class NearDuplicateIndex:
    """Answers "is this close to a skill seen before?" and remembers the skill when it is not."""

    def __init__(self, settings: IngestSettings) -> None:
        self.threshold = settings.near_dup_threshold
        self.bands = settings.minhash_bands
        self.perms = settings.minhash_perms
        self._table = BucketTable()
        self._ids: list[str] = []
        self._blocks: list[np.ndarray] = []
        self._block_size = 4096

    def _signature_of(self, index: int) -> np.ndarray:
        return self._blocks[index // self._block_size][index % self._block_size]

    def query(self, sig: np.ndarray) -> tuple[str, float] | None:
        keys = band_keys(sig, self.bands)
        hits = self._table.lookup(keys)
        candidates = np.unique(hits[hits >= 0])
        best: tuple[str, float] | None = None
        for index in candidates.tolist():
            similarity = float(np.mean(self._signature_of(index) == sig))
            if similarity >= self.threshold and (best is None or similarity > best[1]):
                best = (self._ids[index], similarity)
        return best

    def add(self, skill_id: str, sig: np.ndarray) -> None:
        index = len(self._ids)
        if index % self._block_size == 0:
            self._blocks.append(np.zeros((self._block_size, self.perms), dtype=np.uint32))
        self._blocks[-1][index % self._block_size] = sig
        self._ids.append(skill_id)
        self._table.insert(band_keys(sig, self.bands), index)

    def query_or_add(self, skill_id: str, sig: np.ndarray) -> tuple[str, float] | None:
        found = self.query(sig)
        if found is None:
            self.add(skill_id, sig)
        return found


def jaccard(a: str, b: str, size: int) -> float:
    """Exact shingle Jaccard similarity, for tests and the pairwise baseline."""
    ha, hb = shingle_hashes(a, size), shingle_hashes(b, size)
    if ha.size == 0 and hb.size == 0:
        return 1.0
    inter = np.intersect1d(ha, hb, assume_unique=True).size
    return inter / (ha.size + hb.size - inter)
