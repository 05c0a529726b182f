"""Near-duplicate detection: MinHash signatures (:mod:`minhash`) and the index over them
(:mod:`dedup_index`), in one import."""

from __future__ import annotations

from skillgym_ingest.dedup_index import BucketTable, ExactIndex, NearDuplicateIndex
from skillgym_ingest.minhash import band_keys, jaccard, shingle_hashes, signature, word_hashes

__all__ = [
    "BucketTable", "ExactIndex", "NearDuplicateIndex", "band_keys", "jaccard", "shingle_hashes", "signature",
    "word_hashes",
]
