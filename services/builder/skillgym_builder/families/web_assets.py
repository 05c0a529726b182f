"""Browser libraries a task ships among its input files (p5.js for a generative-art skill written
for the browser): fetched from the npm registry when the task is built, checked against the
registry's integrity hash, cached by name and version. Nothing in the package runs on the host:
one file is read out of its tarball as bytes."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from skillgym_builder.errors import BuildError

REGISTRY_ENV = "SKILLGYM_NPM_REGISTRY"
CACHE_ENV = "SKILLGYM_WEB_ASSET_CACHE"
DEFAULT_REGISTRY = "https://registry.npmjs.org"
MAX_TARBALL_BYTES = 32 * 1024 * 1024
MAX_FILE_BYTES = 8 * 1024 * 1024
TIMEOUT_S = 60.0
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,100}$")
_VERSION = re.compile(r"^\d{1,4}\.\d{1,4}\.\d{1,4}$")


class WebAssetError(BuildError):
    """A browser library could not be fetched or did not match what the registry promised."""

    reason = "web_asset_unavailable"


@dataclass(frozen=True)
class WebAsset:
    """One file of one published package version: ``p5@1.7.0:lib/p5.min.js``."""

    package: str
    version: str
    member: str

    def __post_init__(self) -> None:
        if not _NAME.match(self.package) or not _VERSION.match(self.version):
            raise WebAssetError(f"not a plain npm name and version: {self.package}@{self.version}",
                                reason="web_asset_invalid", package=self.package, version=self.version)
        if self.member.startswith("/") or ".." in self.member.split("/"):
            raise WebAssetError(f"not a path inside the package: {self.member}", reason="web_asset_invalid",
                                member=self.member)

    @property
    def label(self) -> str:
        return f"{self.package}@{self.version}:{self.member}"


def _registry() -> str:
    return os.environ.get(REGISTRY_ENV, DEFAULT_REGISTRY).rstrip("/")


def _cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "skillgym" / "web-assets"


def _get(url: str, limit: int) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            data: bytes = response.read(limit + 1)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise WebAssetError(f"cannot fetch {url}: {exc}", url=url) from exc
    if len(data) > limit:
        raise WebAssetError(f"{url} is larger than {limit} bytes", reason="web_asset_invalid", url=url)
    return data


def _integrity_ok(data: bytes, integrity: str) -> bool:
    """The registry's Subresource Integrity string (``sha512-<base64>``; any listed hash may match)."""
    for entry in integrity.split():
        algorithm, _, digest = entry.partition("-")
        if algorithm in ("sha512", "sha384", "sha256") and (
                base64.b64encode(hashlib.new(algorithm, data).digest()).decode() == digest):
            return True
    return False


def _tarball(package: str, version: str) -> bytes:
    metadata_url = f"{_registry()}/{urllib.parse.quote(package)}/{version}"
    try:
        dist = json.loads(_get(metadata_url, 4 * 1024 * 1024))["dist"]
        url, integrity = str(dist["tarball"]), str(dist["integrity"])
    except (ValueError, KeyError, TypeError) as exc:
        raise WebAssetError(f"no tarball or integrity for {package}@{version}", url=metadata_url) from exc
    data = _get(url, MAX_TARBALL_BYTES)
    if not _integrity_ok(data, integrity):
        raise WebAssetError(f"{package}@{version}: the tarball does not match the registry's integrity hash",
                            reason="web_asset_integrity", url=url)
    return data


def _member(tarball: bytes, asset: WebAsset) -> bytes:
    """The asset's bytes: a regular file, read by name, never extracted to disk."""
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
            info = archive.getmember(f"package/{asset.member}")
            if not info.isreg() or info.size > MAX_FILE_BYTES:
                raise WebAssetError(f"{asset.label} is not a regular file under {MAX_FILE_BYTES} bytes",
                                    reason="web_asset_invalid")
            handle = archive.extractfile(info)
            assert handle is not None
            return handle.read()
    except (KeyError, tarfile.TarError, OSError) as exc:
        raise WebAssetError(f"{asset.label} is not in the package", reason="web_asset_invalid") from exc


def fetch(asset: WebAsset) -> bytes:
    """The asset's bytes, from the cache or the registry (then cached, written atomically)."""
    cached = _cache_dir() / asset.package / asset.version / asset.member
    with contextlib.suppress(OSError):
        return cached.read_bytes()
    data = _member(_tarball(asset.package, asset.version), asset)
    with contextlib.suppress(OSError):
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cached.parent, delete=False) as handle:
            handle.write(data)
        os.replace(handle.name, cached)
    return data
