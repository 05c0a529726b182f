"""LocalStore: keys, listing, missing artifacts, and all-or-nothing writes."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from skillgym_core.errors import ArtifactNotFound, StoreError
from skillgym_core.store.base import Store, content_key, get_json, put_json
from skillgym_core.store.local import LocalStore


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "store")


def test_is_a_store(store: LocalStore) -> None:
    assert isinstance(store, Store)
    assert store.describe() == f"file://{store.root}"


def test_put_get_overwrite_exists_delete(store: LocalStore) -> None:
    assert store.put_bytes("a/b/c.txt", b"one") == "a/b/c.txt"
    assert store.get_bytes("a/b/c.txt") == b"one"
    assert store.exists("a/b/c.txt")
    store.put_bytes("a/b/c.txt", b"two")
    assert store.get_bytes("a/b/c.txt") == b"two"
    store.delete("a/b/c.txt")
    assert not store.exists("a/b/c.txt")
    store.delete("a/b/c.txt")


def test_missing_key_is_typed(store: LocalStore) -> None:
    with pytest.raises(ArtifactNotFound) as caught:
        store.get_bytes("nope/missing.json")
    assert caught.value.reason == "not_found"
    assert caught.value.details["key"] == "nope/missing.json"


def test_list_is_sorted_and_filtered_by_prefix(store: LocalStore) -> None:
    for key in ["tasks/t2/x", "skills/s1/record.json", "tasks/t1/b", "tasks/t1/a"]:
        store.put_bytes(key, b"-")
    assert list(store.list()) == ["skills/s1/record.json", "tasks/t1/a", "tasks/t1/b", "tasks/t2/x"]
    assert list(store.list("tasks/t1/")) == ["tasks/t1/a", "tasks/t1/b"]
    assert list(store.list("none/")) == []


@pytest.mark.parametrize("key", ["", "/etc/passwd", "../outside", "a/../../outside"])
def test_keys_cannot_escape_the_root(store: LocalStore, key: str, tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        store.put_bytes(key, b"x")
    assert not (tmp_path / "outside").exists()


def test_content_key_and_json_helpers(store: LocalStore) -> None:
    assert content_key("blobs/", b"abc", ".bin") == content_key("blobs", b"abc", ".bin")
    assert content_key("blobs", b"abc") != content_key("blobs", b"abd")
    assert content_key("blobs", b"abc", ".bin").startswith("blobs/") and content_key("b", b"").endswith(
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    key = put_json(store, "state/x.json", {"b": 1, "a": [1, 2]})
    assert get_json(store, key) == {"a": [1, 2], "b": 1}


def test_failed_write_leaves_old_content_and_no_temp_files(store: LocalStore) -> None:
    store.put_bytes("blocked/file", b"old")
    (store.root / "blocked" / "dir").mkdir()
    with pytest.raises(OSError):
        store.put_bytes("blocked/dir", b"cannot replace a directory")
    assert store.get_bytes("blocked/file") == b"old"
    assert [p.name for p in (store.root / "blocked").iterdir() if p.name.startswith(".tmp-")] == []


def test_readers_never_see_partial_writes(store: LocalStore) -> None:
    versions = [bytes([i]) * 2_000_000 for i in range(1, 5)]
    store.put_bytes("big.bin", versions[0])
    torn: list[int] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            data = store.get_bytes("big.bin")
            if data not in versions:
                torn.append(len(data))

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(5):
        for version in versions:
            store.put_bytes("big.bin", version)
    stop.set()
    reader.join()
    assert torn == []
    assert list(store.list()) == ["big.bin"]


def test_list_walks_only_the_folder_its_prefix_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(tmp_path / "store")
    for key in ("skills/ab/record.json", "skills/ac/record.json", "skillsets/x.json", "tasks/t/task.tar.gz"):
        store.put_bytes(key, b"{}")
    assert list(store.list("skills/a")) == ["skills/ab/record.json", "skills/ac/record.json"]
    assert list(store.list("skills")) == ["skills/ab/record.json", "skills/ac/record.json", "skillsets/x.json"]
    assert list(store.list("nothing/here/")) == []
    walked: list[Path] = []
    rglob = Path.rglob

    def recording(self: Path, pattern: str) -> object:
        walked.append(self)
        return rglob(self, pattern)

    monkeypatch.setattr(Path, "rglob", recording)
    assert list(store.list("tasks/t/")) == ["tasks/t/task.tar.gz"]
    assert walked == [store.root / "tasks" / "t"]
