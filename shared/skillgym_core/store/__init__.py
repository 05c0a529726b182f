"""Artifact stores: the local filesystem and S3/MinIO behind one Protocol."""

from skillgym_core.store.base import Store, content_key
from skillgym_core.store.factory import make_store

__all__ = ["Store", "content_key", "make_store"]
