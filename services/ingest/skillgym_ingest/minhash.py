"""Near-duplicate signatures: one-permutation MinHash over word shingles, banded for LSH.

Signatures use one-permutation hashing with rotation densification, so a signature costs one
pass over the shingles instead of one pass per permutation. Everything is vectorised with
numpy and done in place: per-call overhead, not arithmetic, is what a few-KB skill costs.
The index that answers "seen something like this before?" lives in :mod:`dedup_index`."""

from __future__ import annotations

import numpy as np

from skillgym_ingest.settings import IngestSettings

_EMPTY32 = np.uint32(0xFFFFFFFF)
_M1 = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_MAX_WORDS = 20000
_MAX_BYTES = 256 * 1024
_P = 0x100000001B3


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, vectorised (wraps modulo 2**64 by design)."""
    return _mix64_inplace(x.astype(np.uint64, copy=True))


def _mix64_inplace(x: np.ndarray) -> np.ndarray:
    tmp = np.right_shift(x, 30)
    x ^= tmp
    x *= _MIX1
    np.right_shift(x, 27, out=tmp)
    x ^= tmp
    x *= _MIX2
    np.right_shift(x, 31, out=tmp)
    x ^= tmp
    return x


_IS_WORD = np.zeros(256, dtype=np.int8)
for _lo, _hi in ((48, 58), (65, 91), (97, 123), (128, 256)):
    _IS_WORD[_lo:_hi] = 1
_IS_WORD[95] = 1
_LOWER = np.arange(256, dtype=np.uint64)
_LOWER[65:91] += 32


def _powers(base: int, count: int) -> np.ndarray:
    return np.concatenate(([np.uint64(1)], np.cumprod(np.full(count - 1, base, dtype=np.uint64))))


_POWERS = _powers(_P, _MAX_BYTES)
_INVERSE_POWERS = _powers(pow(_P, -1, 1 << 64), _MAX_BYTES)


def word_hashes(text: str) -> np.ndarray:
    """A 64-bit hash per word (runs of letters, digits, ``_`` or non-ASCII bytes), case-folded.

    Vectorised polynomial hashing over the UTF-8 bytes: a word's hash is the difference of two
    prefix sums, rescaled by the inverse power of its start, so it does not depend on position."""
    return words_and_offsets(text)[0]


def words_and_offsets(text: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`word_hashes` and the UTF-8 byte offset where each word starts, so that one call can
    hash several texts joined by newlines and the words be split back per text."""
    data = np.frombuffer(text.encode("utf-8", "replace")[:_MAX_BYTES], dtype=np.uint8)
    size = data.size
    if size == 0:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.intp)
    flags = np.zeros(size + 2, dtype=np.int8)
    np.take(_IS_WORD, data, out=flags[1:-1])
    edges = flags[1:] - flags[:-1]
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    weighted = np.take(_LOWER, data)
    weighted *= _POWERS[:size]
    prefix = np.empty(size + 1, dtype=np.uint64)
    prefix[0] = 0
    np.cumsum(weighted, out=prefix[1:])
    raw = prefix[ends]
    raw -= prefix[starts]
    raw *= _INVERSE_POWERS[starts]
    raw += (ends - starts).astype(np.uint64)
    return _mix64_inplace(raw), starts


def _shingles(text: str, size: int) -> np.ndarray:
    """Shingle hashes with repeats (MinHash does not care about them)."""
    return capped_shingles(word_hashes(text), size)


def capped_shingles(tokens: np.ndarray, size: int) -> np.ndarray:
    """:func:`token_shingles` of at most the first ``_MAX_WORDS`` tokens, as for any text."""
    return token_shingles(tokens[:_MAX_WORDS], size)


def token_shingles(tokens: np.ndarray, size: int) -> np.ndarray:
    """Hashes of every run of ``size`` consecutive token hashes (all of them if there are fewer)."""
    if tokens.size == 0:
        return tokens
    size = min(size, tokens.size)
    count = tokens.size - size + 1
    acc = np.zeros(count, dtype=np.uint64)
    for offset in range(size):
        acc *= _M1
        acc += tokens[offset : offset + count]
        acc += np.uint64(offset + 1)
        _mix64_inplace(acc)
    return acc


def shingle_hashes(text: str, size: int) -> np.ndarray:
    """The sorted, distinct hashes of the ``size``-word shingles of ``text``."""
    return np.unique(_shingles(text, size))


def signature(text: str, settings: IngestSettings) -> np.ndarray:
    """A ``minhash_perms``-long uint32 signature; equal slots estimate Jaccard similarity."""
    return signature_of(_shingles(text, settings.shingle_size), settings.minhash_perms)


def signature_of(hashes: np.ndarray, perms: int) -> np.ndarray:
    """The one-permutation MinHash signature of a set of 64-bit shingle hashes."""
    sig = np.full(perms, _EMPTY32, dtype=np.uint32)
    if hashes.size == 0:
        return sig
    bins = (hashes >> np.uint64(32)) % np.uint64(perms)
    np.minimum.at(sig, bins.astype(np.intp), (hashes & _LOW32).astype(np.uint32))
    filled = np.flatnonzero(sig != _EMPTY32)
    if filled.size < perms:
        # Rotation densification: an empty bin borrows from the next filled bin to its right,
        # offset by the distance so that borrowed slots only agree when the sources agree.
        empty = np.flatnonzero(sig == _EMPTY32)
        if filled.size == 0:  # every shingle hashed to the all-ones value: nothing to borrow
            filled = empty[:1]
        nxt = np.searchsorted(filled, empty) % filled.size
        source = filled[nxt]
        distance = (source - empty) % perms
        borrowed = sig[source].astype(np.uint64) + distance.astype(np.uint64) * _M1
        sig[empty] = (_mix64_inplace(borrowed) & np.uint64(0xFFFFFFFE)).astype(np.uint32)
    return sig


def band_keys(signatures: np.ndarray, bands: int) -> np.ndarray:
    """LSH band keys: one uint64 per band of one signature, or a row per signature of a matrix.

    Zero never occurs (it marks an empty slot in the index)."""
    matrix = np.atleast_2d(signatures)
    rows = matrix.shape[1] // bands
    grouped = matrix[:, : rows * bands].astype(np.uint64).reshape(len(matrix), bands, rows)
    acc = np.broadcast_to(np.arange(1, bands + 1, dtype=np.uint64) * _M1, (len(matrix), bands)).copy()
    for column in range(rows):
        acc ^= grouped[:, :, column]
        _mix64_inplace(acc)
    acc |= np.uint64(1)
    return acc if signatures.ndim == 2 else acc[0]


def jaccard(a: str, b: str, size: int) -> float:
    """Exact shingle Jaccard similarity, for tests and the pairwise baseline."""
    ha, hb = shingle_hashes(a, size), shingle_hashes(b, size)
    if ha.size == 0 and hb.size == 0:
        return 1.0
    inter = np.intersect1d(ha, hb, assume_unique=True).size
    return inter / (ha.size + hb.size - inter)
