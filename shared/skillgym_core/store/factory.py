"""Pick the store named in settings."""

from __future__ import annotations

from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store


def make_store(settings: CommonSettings) -> Store:
    if settings.store == "local":
        from skillgym_core.store.local import LocalStore

        return LocalStore(settings.store_root)
    from skillgym_core.store.s3 import S3Store

    return S3Store(
        endpoint=settings.s3_endpoint,
        access_key=settings.s3_access_key.get_secret_value(),
        secret_key=settings.s3_secret_key.get_secret_value(),
        bucket=settings.s3_bucket,
        secure=settings.s3_secure,
        region=settings.s3_region,
    )
