"""Fixed-memory storage for data that grows with the corpus: a hash table and record logs
kept in unlinked temporary files.

The table keeps one fingerprint byte per slot in memory, which answers almost every lookup
without touching the file (a read happens only when the fingerprint matches), and a bounded
batch of pending slot writes that is flushed through a sliding memory map in slot order. The
files' pages sit in the kernel's page cache, not in the process: resident memory depends on
the table's capacity, not on how many keys it holds."""

from __future__ import annotations

import itertools
import mmap
import os
import struct
import tempfile
from pathlib import Path

import numpy as np

_SLOT = struct.Struct("<QQ")
_PENDING_LIMIT = 1 << 16  # most slot writes held before a flush (about 6 MB); small tables hold fewer
_WINDOW_SLOTS = 1 << 16  # slots mapped at a time while flushing (1 MB)


def _temp_fd(directory: Path | None) -> int:
    """A file descriptor of an unlinked temporary file (gone when closed, or when the process ends)."""
    with tempfile.TemporaryFile(dir=directory) as handle:
        return os.dup(handle.fileno())


class _Generation:
    """One linear-probing table: slots on disk, a fingerprint byte per slot in memory (0 = empty)."""

    def __init__(self, capacity: int, directory: Path | None) -> None:
        self.capacity = capacity
        self.mask = capacity - 1
        self.size = 0
        self.fingerprints = bytearray(capacity)
        self.pending: dict[int, tuple[int, int]] = {}
        # A flush costs about one page fault per page it touches: holding a few writes per page
        # of the table makes that cheap, and the cap keeps the batch a fixed size.
        self.pending_limit = max(64, min(_PENDING_LIMIT, capacity >> 6))
        self.fd = _temp_fd(directory)
        os.ftruncate(self.fd, capacity * _SLOT.size)

    def find(self, key: int) -> tuple[int, int]:
        """(value, -1) when ``key`` is present, else (-1, the free slot where it would go)."""
        fingerprint = (key >> 56) or 1
        fingerprints, mask = self.fingerprints, self.mask
        slot = key & mask
        while True:
            current = fingerprints[slot]
            if current == 0:
                return -1, slot
            if current == fingerprint:
                stored_key, value = self._read(slot)
                if stored_key == key:
                    return value, -1
            slot = (slot + 1) & mask

    def _read(self, slot: int) -> tuple[int, int]:
        entry = self.pending.get(slot)
        if entry is not None:
            return entry
        stored_key, value = _SLOT.unpack(os.pread(self.fd, _SLOT.size, slot * _SLOT.size))
        return stored_key, value

    def put(self, slot: int, key: int, value: int) -> None:
        self.fingerprints[slot] = (key >> 56) or 1
        self.pending[slot] = (key, value)
        self.size += 1
        if len(self.pending) >= self.pending_limit:
            self.flush()

    def flush(self) -> None:
        """Write pending slots in slot order, one mapped window at a time (unmapped after)."""
        if not self.pending:
            return
        count = len(self.pending)
        slots = np.fromiter(self.pending, dtype=np.int64, count=count)
        entries = np.fromiter(itertools.chain.from_iterable(self.pending.values()), dtype=np.uint64, count=2 * count)
        entries = entries.reshape(count, 2)
        order = np.argsort(slots)
        slots, entries = slots[order], entries[order]
        windows = slots // _WINDOW_SLOTS
        starts = np.concatenate(([0], np.flatnonzero(np.diff(windows)) + 1, [len(slots)]))
        for begin, end in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True):
            first_slot = int(windows[begin]) * _WINDOW_SLOTS
            length = min(_WINDOW_SLOTS, self.capacity - first_slot) * _SLOT.size
            with mmap.mmap(self.fd, length, offset=first_slot * _SLOT.size) as window:
                view = np.frombuffer(window, dtype=np.uint64).reshape(-1, 2)
                view[slots[begin:end] - first_slot] = entries[begin:end]
                del view
        self.pending.clear()

    def close(self) -> None:
        os.close(self.fd)


class BucketTable:
    """uint64 key -> the first int value stored for it; keys are non-zero.

    Grows by chaining generations of doubling capacity rather than rehashing, so a growth step
    costs nothing; a lookup asks every generation (there are few: the first is large and sparse)."""

    def __init__(self, capacity: int = 1 << 22, directory: Path | None = None) -> None:
        self._directory = directory
        self._generations = [_Generation(max(8, 1 << (capacity - 1).bit_length()), directory)]
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def probe(self, keys: list[int]) -> tuple[list[int], list[int]]:
        """For each key: its value or -1, and where in the newest generation it would go."""
        values: list[int] = []
        slots: list[int] = []
        *older, newest = self._generations
        for key in keys:
            value = -1
            for generation in older:
                value = generation.find(key)[0]
                if value >= 0:
                    break
            slot = -1
            if value < 0:
                value, slot = newest.find(key)
            values.append(value)
            slots.append(slot)
        return values, slots

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        return np.array(self.probe(keys.tolist())[0], dtype=np.int64)

    def get(self, key: int) -> int:
        return self.probe([key])[0][0]

    def insert(self, keys: np.ndarray, value: int) -> None:
        key_list = keys.tolist()
        found, slots = self.probe(key_list)
        self.fill(key_list, [value] * len(key_list), found, slots)

    def fill(self, keys: list[int], values: list[int], found: list[int], slots: list[int]) -> None:
        """Store the keys :meth:`probe` did not find, at the slots it named (re-probing any slot
        an earlier key of the same call took)."""
        newest = self._generations[-1]
        taken: set[int] = set()
        for key, value, present, slot in zip(keys, values, found, slots, strict=True):
            if present >= 0:
                continue
            if (newest.size + 1) * 2 > newest.capacity:
                newest = _Generation(newest.capacity * 2, self._directory)
                self._generations.append(newest)
                taken.clear()
                slot = -1
            if slot < 0 or slot in taken:
                (present,), (slot,) = self.probe([key])  # an earlier key of this call may be it
                if present >= 0:
                    continue
            newest.put(slot, key, value)
            taken.add(slot)
            self._size += 1

    def close(self) -> None:
        for generation in self._generations:
            generation.close()
        self._generations = []


class RecordLog:
    """Append-only fixed-size records in a temp file; recent ones are buffered in memory."""

    def __init__(self, record_size: int, directory: Path | None = None, buffer_records: int = 2048) -> None:
        self.record_size = record_size
        self._fd = _temp_fd(directory)
        self._flushed = 0
        self._buffer = bytearray()
        self._buffer_limit = buffer_records * record_size

    def __len__(self) -> int:
        return self._flushed + len(self._buffer) // self.record_size

    def append(self, record: bytes) -> int:
        index = len(self)
        self._buffer += record
        if len(self._buffer) >= self._buffer_limit:
            os.pwrite(self._fd, self._buffer, self._flushed * self.record_size)
            self._flushed += len(self._buffer) // self.record_size
            self._buffer = bytearray()
        return index

    def read(self, index: int) -> bytes:
        if index >= self._flushed:
            start = (index - self._flushed) * self.record_size
            return bytes(self._buffer[start : start + self.record_size])
        return os.pread(self._fd, self.record_size, index * self.record_size)

    def close(self) -> None:
        os.close(self._fd)


_ID_BYTES = 64


class IdLog:
    """Skill ids by insertion number; ids over 64 UTF-8 bytes (never content ids) stay in memory."""

    def __init__(self, directory: Path | None = None) -> None:
        self._log = RecordLog(_ID_BYTES, directory)
        self._long: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._log)

    def append(self, skill_id: str) -> int:
        raw = skill_id.encode()
        if len(raw) > _ID_BYTES or raw.endswith(b"\0"):
            index = self._log.append(bytes(_ID_BYTES))
            self._long[index] = skill_id
            return index
        return self._log.append(raw.ljust(_ID_BYTES, b"\0"))

    def get(self, index: int) -> str:
        if index in self._long:
            return self._long[index]
        return self._log.read(index).rstrip(b"\0").decode()

    def close(self) -> None:
        self._log.close()
