"""The tar ``data`` extraction filter's rules for interpreters whose ``tarfile`` predates it
(Python before 3.11.4, such as Debian 12's 3.11.2): an image's files are unpacked as plain data."""

from __future__ import annotations

import posixpath
import tarfile
from collections.abc import Iterator
from pathlib import Path


def _inside(name: str) -> bool:
    normal = posixpath.normpath(name)
    return not posixpath.isabs(name) and normal != ".." and not normal.startswith("../")


def data_members(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members the ``data`` filter keeps, as it keeps them: no absolute or escaping names, no
    links that lead out of the tree, no devices or FIFOs, no set-id or group/other write bits.
    Like the filter, an unsafe member refuses the whole archive (:class:`tarfile.TarError`)."""
    for member in archive:
        if not _inside(member.name):
            raise tarfile.TarError(f"{member.name!r} would be extracted outside the destination")
        if member.isdev() or member.isfifo():
            raise tarfile.TarError(f"{member.name!r} is a special file")
        if member.issym() and not _inside(posixpath.join(posixpath.dirname(member.name), member.linkname)):
            raise tarfile.TarError(f"{member.name!r} links outside the destination ({member.linkname!r})")
        if member.islnk() and not _inside(member.linkname):
            raise tarfile.TarError(f"{member.name!r} links outside the destination ({member.linkname!r})")
        member.mode &= 0o755
        member.uid = member.gid = 0
        member.uname = member.gname = ""
        yield member


def extract_data(archive: tarfile.TarFile, dest: Path) -> None:
    """Extract ``archive`` into ``dest`` under the ``data`` filter's rules on any Python 3.11."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(dest, filter="data")
    else:
        archive.extractall(dest, members=data_members(archive))
