"""A store in an S3 bucket (MinIO SDK; any S3-compatible server). A PUT is atomic: readers see
the old object or the whole new one, never a partial write, so no temp-and-rename is needed."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import TypeVar

import certifi
import urllib3
from minio import Minio
from minio.error import MinioException, S3Error
from urllib3.util import Retry, Timeout

from skillgym_core.errors import ArtifactNotFound, StoreError, StoreUnavailable

T = TypeVar("T")

NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchObject"})
ACCESS_DENIED_CODES = frozenset(
    {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken"}
)
# answers of a server that is overloaded, restarting or briefly unable to serve: worth waiting out
UNAVAILABLE_CODES = frozenset(
    {"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "XMinioServerNotInitialized"}
)


def _http_client(secure: bool, connect_timeout_s: float, read_timeout_s: float) -> urllib3.PoolManager:
    return urllib3.PoolManager(
        timeout=Timeout(connect=connect_timeout_s, read=read_timeout_s),
        maxsize=10,
        cert_reqs="CERT_REQUIRED" if secure else "CERT_NONE",
        ca_certs=os.environ.get("SSL_CERT_FILE") or certifi.where(),
        retries=Retry(total=3, backoff_factor=0.2, status_forcelist=[500, 502, 503, 504]),
    )


class S3Store:
    def __init__(
        self,
        *,
        endpoint: str,
        access_key: str,
        secret_key: str,
        bucket: str,
        secure: bool = False,
        region: str = "us-east-1",
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 120.0,
    ) -> None:
        self.endpoint = endpoint
        self.bucket = bucket
        self._client = Minio(
            endpoint,
            access_key=access_key,
            secret_key=secret_key,
            secure=secure,
            region=region or None,
            http_client=_http_client(secure, connect_timeout_s, read_timeout_s),
        )
        self._ensure_bucket()

    def __repr__(self) -> str:
        return f"S3Store({self.describe()!r})"

    def describe(self) -> str:
        return f"s3://{self.bucket}@{self.endpoint}"

    def _ensure_bucket(self) -> None:
        if self._call("check bucket", "", lambda: self._client.bucket_exists(self.bucket)):
            return
        try:
            self._call("create bucket", "", lambda: self._client.make_bucket(self.bucket))
        except StoreError as exc:
            # another process created it between our check and our create
            if exc.details.get("code") not in {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}:
                raise

    def _call(self, action: str, key: str, operation: Callable[[], T]) -> T:
        """Run one SDK call, turning its failures into typed store errors (never with secrets)."""
        where = {"endpoint": self.endpoint, "bucket": self.bucket, "key": key, "action": action}
        try:
            return operation()
        except S3Error as exc:
            if exc.code in NOT_FOUND_CODES:
                raise ArtifactNotFound(f"no artifact at {key} in {self.describe()}", **where) from exc
            if exc.code in UNAVAILABLE_CODES:
                raise StoreUnavailable(
                    f"S3 {action} failed at {self.describe()}: {exc.code}: {exc.message}", code=exc.code, **where
                ) from exc
            reason = "access_denied" if exc.code in ACCESS_DENIED_CODES else "store"
            raise StoreError(
                f"S3 {action} failed at {self.describe()}: {exc.code}: {exc.message}",
                reason=reason,
                code=exc.code,
                **where,
            ) from exc
        except ValueError as exc:  # the SDK validates names (bucket, key) before any request
            raise StoreError(f"S3 {action} refused at {self.describe()}: {exc}", reason="invalid", **where) from exc
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StoreUnavailable(
                f"S3 {action} failed at {self.describe()}: {type(exc).__name__}: {exc}", **where
            ) from exc

    @staticmethod
    def _check_key(key: str) -> str:
        rel = PurePosixPath(key)
        if not key or key.endswith("/") or rel.is_absolute() or ".." in rel.parts or rel.as_posix() != key:
            raise StoreError(f"invalid store key: {key!r}", key=key)
        return key

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> str:
        self._check_key(key)
        self._call(
            "put",
            key,
            lambda: self._client.put_object(self.bucket, key, io.BytesIO(data), len(data), content_type=content_type),
        )
        return key

    def get_bytes(self, key: str) -> bytes:
        self._check_key(key)

        def read() -> bytes:
            response = self._client.get_object(self.bucket, key)
            try:
                return response.read()
            finally:
                response.close()
                response.release_conn()

        return self._call("get", key, read)

    def exists(self, key: str) -> bool:
        self._check_key(key)
        try:
            self._call("stat", key, lambda: self._client.stat_object(self.bucket, key))
        except ArtifactNotFound:
            return False
        return True

    def list(self, prefix: str = "") -> Iterator[str]:
        names = self._call(
            "list",
            prefix,
            lambda: [
                obj.object_name
                for obj in self._client.list_objects(self.bucket, prefix=prefix or None, recursive=True)
                if obj.object_name and not obj.is_dir
            ],
        )
        yield from sorted(names)

    def delete(self, key: str) -> None:
        self._check_key(key)
        self._call("delete", key, lambda: self._client.remove_object(self.bucket, key))
