"""The tar ``data`` extraction filter's rules on any Python 3.11: the standard library's filter where
``tarfile`` has it (3.11.4 and later), the same rules applied here where it predates the filter (such
as Debian 12's 3.11.2). An image's files are unpacked as plain data, and both paths give the same
tree and refuse the same archives:

- a leading ``/`` is stripped from a member's name (``/abs`` lands as ``abs`` inside the tree);
- a name that leads out of the tree, through ``..`` or through a link an earlier member made,
  refuses the archive;
- a link whose target is absolute or leads out of the tree refuses the archive;
- devices and FIFOs refuse the archive;
- files lose set-id and group/other write bits, the owner can always read and write them;
  directories get the default mode; ownership is not restored.
"""

from __future__ import annotations

import os
import posixpath
import tarfile
from collections.abc import Iterator
from pathlib import Path


def _within(path: str, root: str) -> bool:
    """Whether ``path``, with every link that exists on disk by now resolved, stays in ``root``."""
    return os.path.commonpath([os.path.realpath(path), root]) == root


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it, racing other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _data_mode(member: tarfile.TarInfo) -> int:
    if member.isdir():
        return 0o777 & ~_umask()  # the filter leaves a directory's mode to the system's default
    mode = member.mode & 0o755
    if member.isreg() or member.islnk():
        if not mode & 0o100:
            mode &= ~0o111
        mode |= 0o600
    return mode


def data_members(archive: tarfile.TarFile, dest: Path) -> Iterator[tarfile.TarInfo]:
    """The members the ``data`` filter keeps, as it keeps them (see the module's rules). Like the
    filter, an unsafe member refuses the whole archive (:class:`tarfile.TarError`), and each member
    is judged against what the members before it put on disk (``extractall`` takes them one at a
    time), so a path through an earlier link is followed where it really leads."""
    root = os.path.realpath(dest)
    for member in archive:
        name = member.name.lstrip("/" + os.sep)
        if posixpath.isabs(name) or not _within(os.path.join(root, name), root):
            raise tarfile.TarError(f"{member.name!r} would be extracted outside the destination")
        if member.isdev() or member.isfifo():
            raise tarfile.TarError(f"{member.name!r} is a special file")
        if member.issym() or member.islnk():  # a symlink is read from its folder, a hard link from the top
            base = os.path.dirname(name) if member.issym() else ""
            if posixpath.isabs(member.linkname) or not _within(os.path.join(root, base, member.linkname), root):
                raise tarfile.TarError(f"{member.name!r} links outside the destination ({member.linkname!r})")
        member.name = name
        member.mode = _data_mode(member)
        member.uid = member.gid = 0
        member.uname = member.gname = ""
        yield member


def extract_data(archive: tarfile.TarFile, dest: Path, *, use_filter: bool | None = None) -> None:
    """Extract ``archive`` into ``dest`` under the ``data`` filter's rules. ``use_filter`` picks the
    path: the standard library's filter (True), this module's rules (False), or the filter wherever
    ``tarfile`` has it (None)."""
    if use_filter is None:
        use_filter = hasattr(tarfile, "data_filter")
    if use_filter:
        archive.extractall(dest, filter="data")
    elif hasattr(tarfile, "fully_trusted_filter"):  # the members are filtered already: say so to tarfile
        archive.extractall(dest, members=data_members(archive, dest), filter="fully_trusted")
    else:
        archive.extractall(dest, members=data_members(archive, dest))
