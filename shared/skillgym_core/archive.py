"""Deterministic tar.gz packing of directories and safe unpacking of untrusted archives."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from skillgym_core.errors import SkillGymError


class UnsafeArchiveError(SkillGymError):
    reason = "unsafe_archive"


BLOCK = 512
RECORD = 20 * BLOCK
_USTAR_NUMBERS = ((100, 8), (108, 8), (116, 8), (124, 12), (136, 12))  # mode, uid, gid, size, mtime


def pack_dir(root: Path) -> bytes:
    """Pack ``root`` into gzip'd tar bytes that depend only on paths, contents and modes:
    regular files and directories in path order, links and special files left out, owner 0,
    mtime 0. Ingest packs every accepted skill, so the common member (an ASCII path of at most
    100 bytes) gets its ustar header written directly; others take ``tarfile``'s PAX header.
    Both produce exactly the bytes ``tarfile`` would."""
    out = bytearray()
    for parts, is_dir, path in sorted(_members(root, ())):
        name = "/".join(parts) + ("/" if is_dir else "")
        if is_dir:
            out += _header(name, 0o755, 0, tarfile.DIRTYPE)
            continue
        data = path.read_bytes()
        mode = 0o755 if os.stat(path).st_mode & 0o111 else 0o644
        out += _header(name, mode, len(data), tarfile.REGTYPE)
        out += data
        out += bytes(-len(data) % BLOCK)
    out += bytes(2 * BLOCK)
    out += bytes(-len(out) % RECORD)
    return gzip.compress(bytes(out), compresslevel=6, mtime=0)  # zlib's default: level 9 costs ~40% more CPU for ~2% smaller skill archives


def _members(directory: Path, parts: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], bool, Path]]:
    with os.scandir(directory) as entries:
        listed = list(entries)
    for entry in listed:
        if entry.is_symlink():
            continue
        here = (*parts, entry.name)
        if entry.is_dir(follow_symlinks=False):
            yield here, True, Path(entry.path)
            yield from _members(Path(entry.path), here)
        elif entry.is_file(follow_symlinks=False):
            yield here, False, Path(entry.path)


def _header(name: str, mode: int, size: int, kind: bytes) -> bytes:
    encoded = name.encode("ascii", "surrogateescape") if name.isascii() else b""
    if not encoded or len(encoded) > 100 or size >= 8**11:
        info = tarfile.TarInfo(name.rstrip("/") if kind == tarfile.DIRTYPE else name)
        info.type, info.mode, info.size, info.mtime = kind, mode, size, 0
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info.tobuf(tarfile.PAX_FORMAT, tarfile.ENCODING, "surrogateescape")
    header = bytearray(BLOCK)
    header[0 : len(encoded)] = encoded
    for (offset, width), value in zip(_USTAR_NUMBERS, (mode, 0, 0, size, 0), strict=True):
        header[offset : offset + width] = b"%0*o\0" % (width - 1, value)
    header[148:156] = b"        "
    header[156:157] = kind
    header[257:265] = tarfile.POSIX_MAGIC
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


def unpack_dir(data: bytes, dest: Path, *, max_bytes: int = 512 * 1024 * 1024, max_files: int = 20000) -> Path:
    """Unpack an archive made by :func:`pack_dir` (or any untrusted tar.gz) into ``dest``.

    Rejects absolute paths, ``..``, links and device files, and caps total size and count."""
    dest.mkdir(parents=True, exist_ok=True)
    total = 0
    count = 0
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 - closed by the with below
    except tarfile.TarError as exc:
        raise UnsafeArchiveError(f"not a readable tar archive: {exc}") from exc
    with tar:
        for member in tar:
            count += 1
            if count > max_files:
                raise UnsafeArchiveError("archive has too many entries", limit=max_files)
            rel = PurePosixPath(member.name)
            if rel.is_absolute() or ".." in rel.parts:
                raise UnsafeArchiveError(f"path escapes the archive root: {member.name}", path=member.name)
            target = dest.joinpath(*rel.parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                raise UnsafeArchiveError(f"links and special files are not allowed: {member.name}")
            total += member.size
            if total > max_bytes:
                raise UnsafeArchiveError("archive expands past the size cap", limit=max_bytes)
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None
            target.write_bytes(source.read())
            target.chmod(0o755 if member.mode & 0o111 else 0o644)
    return dest
