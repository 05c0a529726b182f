"""Build tiny pure-Python wheels (and sdists) into a directory, so pip tests need no index."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(
    dest: Path,
    name: str,
    version: str,
    files: Mapping[str, str],
    *,
    console_scripts: Mapping[str, str] | None = None,
    requires: Sequence[str] = (),
) -> Path:
    """A ``py3-none-any`` wheel holding ``files`` (path in site-packages -> text)."""
    dest.mkdir(parents=True, exist_ok=True)
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    contents = {path: text.encode() for path, text in files.items()}
    contents[f"{dist}/METADATA"] = metadata.encode()
    contents[f"{dist}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: skillgym-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    if console_scripts:
        entries = "".join(f"{script} = {target}\n" for script, target in console_scripts.items())
        contents[f"{dist}/entry_points.txt"] = f"[console_scripts]\n{entries}".encode()
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in contents.items())
    contents[f"{dist}/RECORD"] = (record + f"{dist}/RECORD,,\n").encode()
    wheel = dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return wheel


def build_sdist(dest: Path, name: str, version: str, setup_py: str) -> Path:
    """A source distribution whose ``setup.py`` is ``setup_py`` (pip would have to run it)."""
    dest.mkdir(parents=True, exist_ok=True)
    base = f"{name}-{version}"
    sdist = dest / f"{base}.tar.gz"
    members = {
        f"{base}/setup.py": setup_py.encode(),
        f"{base}/PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
    }
    with tarfile.open(sdist, "w:gz") as archive:
        for path, data in members.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return sdist
