"""S3Store against a real S3 server: bucket creation, CRUD, listing, atomic overwrites, typed errors."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest
from skillgym_core.errors import ArtifactNotFound, StoreError, StoreUnavailable
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store, get_json, put_json
from skillgym_core.store.factory import make_store
from skillgym_core.store.s3 import S3Store

from tests.support.services import S3Server, free_port


def new_bucket() -> str:
    return f"skillgym-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def store(s3: S3Server) -> S3Store:
    return S3Store(endpoint=s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, bucket=new_bucket())


def test_unreachable_endpoint_is_a_typed_error() -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(StoreError) as caught:
        S3Store(endpoint=endpoint, access_key="ak", secret_key="sk-not-shown", bucket="skillgym", connect_timeout_s=1)
    assert caught.value.reason == "unreachable"
    assert isinstance(caught.value, StoreUnavailable)  # transient: workers wait it out
    assert caught.value.details["endpoint"] == endpoint
    assert endpoint in str(caught.value)
    assert "sk-not-shown" not in str(caught.value.to_dict())
    assert time.monotonic() - started < 30


def test_an_invalid_bucket_name_is_a_typed_error() -> None:
    with pytest.raises(StoreError) as caught:
        S3Store(endpoint="127.0.0.1:9", access_key="ak", secret_key="sk", bucket="No_Such/Bucket")
    assert caught.value.reason == "invalid"
    assert caught.value.details["bucket"] == "No_Such/Bucket"


@pytest.mark.integration
def test_bucket_is_created_once_and_reused(s3: S3Server) -> None:
    bucket = new_bucket()
    first = S3Store(endpoint=s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, bucket=bucket)
    first.put_bytes("k", b"v")
    second = S3Store(endpoint=s3.endpoint, access_key=s3.access_key, secret_key=s3.secret_key, bucket=bucket)
    assert second.get_bytes("k") == b"v"
    assert bucket in {b.name for b in s3.client().list_buckets()}
    assert isinstance(second, Store)
    assert second.describe() == f"s3://{bucket}@{s3.endpoint}"


@pytest.mark.integration
def test_put_get_overwrite_exists_delete(store: S3Store) -> None:
    assert store.put_bytes("a/b/c.json", b'{"x": 1}', "application/json") == "a/b/c.json"
    assert store.get_bytes("a/b/c.json") == b'{"x": 1}'
    assert store.exists("a/b/c.json")
    assert not store.exists("a/b")
    store.put_bytes("a/b/c.json", b"second")
    assert store.get_bytes("a/b/c.json") == b"second"
    store.delete("a/b/c.json")
    assert not store.exists("a/b/c.json")
    store.delete("a/b/c.json")
    store.put_bytes("empty", b"")
    assert store.get_bytes("empty") == b""


@pytest.mark.integration
def test_content_type_is_stored(store: S3Store, s3: S3Server) -> None:
    put_json(store, "state/x.json", {"b": 2, "a": 1})
    assert get_json(store, "state/x.json") == {"a": 1, "b": 2}
    assert s3.client().stat_object(store.bucket, "state/x.json").content_type == "application/json"


@pytest.mark.integration
def test_missing_key_raises_artifact_not_found(store: S3Store) -> None:
    with pytest.raises(ArtifactNotFound) as caught:
        store.get_bytes("nothing/here.json")
    assert caught.value.reason == "not_found"
    assert caught.value.details["key"] == "nothing/here.json"
    assert caught.value.details["bucket"] == store.bucket


@pytest.mark.integration
def test_list_is_sorted_recursive_and_prefixed(store: S3Store) -> None:
    keys = ["tasks/t2/x", "skills/s1/record.json", "tasks/t1/b", "tasks/t1/a", "tasks/t10/z"]
    for key in keys:
        store.put_bytes(key, b"-")
    assert list(store.list()) == sorted(keys)
    assert list(store.list("tasks/t1/")) == ["tasks/t1/a", "tasks/t1/b"]
    assert list(store.list("tasks/t1")) == ["tasks/t1/a", "tasks/t1/b", "tasks/t10/z"]
    assert list(store.list("none/")) == []


@pytest.mark.integration
@pytest.mark.parametrize("key", ["", "/abs", "../up", "a/../b", "a//b", "dir/"])
def test_invalid_keys_are_refused(store: S3Store, key: str) -> None:
    with pytest.raises(StoreError) as caught:
        store.put_bytes(key, b"x")
    assert caught.value.reason == "store"
    assert list(store.list()) == []


@pytest.mark.integration
def test_large_objects_round_trip(store: S3Store) -> None:
    data = bytes(range(256)) * (7 * 4096)  # 7 MiB: larger than one multipart part
    store.put_bytes("big.bin", data)
    assert store.get_bytes("big.bin") == data


@pytest.mark.integration
def test_readers_see_old_or_new_object_never_a_mix(store: S3Store) -> None:
    versions = [bytes([i]) * (6 * 1024 * 1024) for i in (1, 2)]
    store.put_bytes("obj", versions[0])
    torn: list[int] = []
    reads = 0
    stop = threading.Event()

    def read() -> None:
        nonlocal reads
        while not stop.is_set():
            data = store.get_bytes("obj")
            reads += 1
            if data not in versions:
                torn.append(len(data))

    reader = threading.Thread(target=read)
    reader.start()
    for round_ in range(4):
        store.put_bytes("obj", versions[(round_ + 1) % 2])
    stop.set()
    reader.join()
    assert reads > 0
    assert torn == []


@pytest.mark.integration
def test_wrong_credentials_are_a_typed_error_without_secrets(s3: S3Server, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    wrong_secret = "wrong-" + uuid.uuid4().hex
    with pytest.raises(StoreError) as caught:
        S3Store(endpoint=s3.endpoint, access_key=s3.access_key, secret_key=wrong_secret, bucket=new_bucket())
    assert caught.value.reason == "access_denied"
    assert caught.value.details["code"] in {"SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied"}
    assert caught.value.details["endpoint"] == s3.endpoint
    assert wrong_secret not in str(caught.value.to_dict())
    assert wrong_secret not in caplog.text
    assert s3.secret_key not in caplog.text


@pytest.mark.integration
def test_factory_builds_an_s3_store_from_settings(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    bucket = new_bucket()
    monkeypatch.setenv("SKILLGYM_STORE", "s3")
    monkeypatch.setenv("SKILLGYM_S3_ENDPOINT", s3.endpoint)
    monkeypatch.setenv("SKILLGYM_S3_ACCESS_KEY", s3.access_key)
    monkeypatch.setenv("SKILLGYM_S3_SECRET_KEY", s3.secret_key)
    monkeypatch.setenv("SKILLGYM_S3_BUCKET", bucket)
    store = make_store(CommonSettings())
    assert isinstance(store, S3Store)
    assert store.describe() == f"s3://{bucket}@{s3.endpoint}"
    assert s3.secret_key not in repr(store)
    store.put_bytes("k", b"v")
    assert store.get_bytes("k") == b"v"
