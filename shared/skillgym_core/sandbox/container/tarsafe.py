"""The tar ``data`` extraction filter's rules for interpreters whose ``tarfile`` predates it
(Python before 3.11.4, such as Debian 12's 3.11.2): an image's files are unpacked as plain data."""

from __future__ import annotations

import os
import posixpath
import tarfile
from collections.abc import Iterator
from pathlib import Path


def _within(path: str, root: str) -> bool:
    """Whether ``path``, with every link that exists on disk by now resolved, stays in ``root``."""
    return os.path.commonpath([os.path.realpath(path), root]) == root


def data_members(archive: tarfile.TarFile, dest: Path) -> Iterator[tarfile.TarInfo]:
    """The members the ``data`` filter keeps, as it keeps them: no absolute or escaping names, no
    links that lead out of the tree, no devices or FIFOs, no set-id or group/other write bits.
    Like the filter, an unsafe member refuses the whole archive (:class:`tarfile.TarError`), and
    each member is judged against what the members before it put on disk (``extractall`` takes
    them one at a time), so a path through an earlier link is followed where it really leads."""
    root = os.path.realpath(dest)
    for member in archive:
        if posixpath.isabs(member.name) or not _within(os.path.join(root, member.name), root):
            raise tarfile.TarError(f"{member.name!r} would be extracted outside the destination")
        if member.isdev() or member.isfifo():
            raise tarfile.TarError(f"{member.name!r} is a special file")
        if member.issym() or member.islnk():  # a symlink is read from its folder, a hard link from the top
            base = os.path.dirname(member.name) if member.issym() else ""
            if posixpath.isabs(member.linkname) or not _within(os.path.join(root, base, member.linkname), root):
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
        archive.extractall(dest, members=data_members(archive, dest))
