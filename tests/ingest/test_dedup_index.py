"""The on-disk dedup index: exact semantics across flushes, generations and fingerprint clashes."""

from __future__ import annotations

import random

import numpy as np
from skillgym_ingest.dedup_index import BucketTable, ExactIndex, IdLog, NearDuplicateIndex, RecordLog
from skillgym_ingest.minhash import band_keys, signature
from skillgym_ingest.settings import IngestSettings


def _key(top: int, middle: int, low: int) -> int:
    """A key with a chosen fingerprint byte (top), home slot (low bits) and distinguishing middle."""
    return (top << 56) | (middle << 20) | low | 1


def test_table_matches_a_dict_through_flushes_and_generations() -> None:
    rng = random.Random(3)
    table = BucketTable(capacity=64)
    reference: dict[int, int] = {}
    keys = [rng.getrandbits(64) | 1 for _ in range(3000)]
    # Clashing fingerprints and home slots make lookups read slots back from the file.
    keys += [_key(0xAB, middle, 0x11) for middle in range(1, 200)]
    for value, key in enumerate(keys):
        table.insert(np.array([key], dtype=np.uint64), value)
        reference.setdefault(key, value)
    assert len(table) == len(reference)
    probe = np.array([*reference, _key(0xAB, 999, 0x11), 12345 | 1], dtype=np.uint64)
    assert table.lookup(probe).tolist() == [*reference.values(), -1, -1]
    table.close()


def test_fill_keeps_the_first_value_for_keys_repeated_in_one_call() -> None:
    table = BucketTable(capacity=8)
    keys = [_key(7, 1, 3), _key(7, 2, 3), _key(7, 1, 3)]
    found, slots = table.probe(keys)
    table.fill(keys, [10, 20, 30], found, slots)
    assert table.probe(keys)[0] == [10, 20, 10]
    assert len(table) == 2
    table.close()


def test_record_log_reads_buffered_and_flushed_records() -> None:
    log = RecordLog(8, buffer_records=4)
    for index in range(11):
        assert log.append(index.to_bytes(8, "little")) == index
    assert [int.from_bytes(log.read(i), "little") for i in range(11)] == list(range(11))
    log.close()


def test_id_log_round_trips_short_and_long_ids() -> None:
    ids = IdLog()
    values = ["skill-0123456789abcdef", "a", "x" * 200, "ünï-cödé"]
    numbers = [ids.append(value) for value in values]
    assert [ids.get(number) for number in numbers] == values
    ids.close()


def test_exact_index_maps_first_representative() -> None:
    index = ExactIndex(IngestSettings())
    digest = "ab" * 32
    assert index.get(digest) is None
    index.put(digest, "skill-1")
    index.put(digest, "skill-2")
    assert index.get(digest) == "skill-1"
    index.close()


def test_near_index_with_precomputed_band_keys_matches_computed_ones() -> None:
    settings = IngestSettings()
    texts = [f"alpha beta gamma {i} delta epsilon zeta eta theta iota kappa lambda mu nu" for i in range(40)]
    sigs = np.stack([signature(text, settings) for text in texts])
    keys = band_keys(sigs, settings.minhash_bands)
    with_keys, without = NearDuplicateIndex(settings), NearDuplicateIndex(settings)
    answers = [
        (with_keys.query_or_add(str(i), sigs[i], keys[i]), without.query_or_add(str(i), sigs[i]))
        for i in range(len(texts))
    ]
    assert all(a == b for a, b in answers)
    assert any(a is not None for a, _ in answers)
    with_keys.close()
    without.close()
