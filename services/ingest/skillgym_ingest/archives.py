"""Safe extraction of untrusted zip and tar archives.

Guards, each a typed error: paths that escape the root, links (any link in a zip; tar links
whose target leaves the tree), device files, encrypted entries, too many entries, too many
bytes, and a compression ratio that only a bomb reaches. Declared sizes are not trusted:
bytes are counted while they are written."""

from __future__ import annotations

import lzma
import os
import stat
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO

from skillgym_ingest.errors import (
    ArchiveBombError,
    ArchiveCorruptError,
    ArchiveEncryptedError,
    ArchiveError,
    ArchiveLinkError,
    ArchiveTooLargeError,
    ArchiveTooManyFilesError,
    ArchiveTraversalError,
)
from skillgym_ingest.settings import IngestSettings

ARCHIVE_SUFFIXES = (".zip", ".skill", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_CHUNK = 1 << 16


def is_archive_name(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def archive_stem(name: str) -> str:
    lower = name.lower()
    for suffix in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True):
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


class _Budget:
    def __init__(self, settings: IngestSettings, compressed_size: int) -> None:
        self.max_bytes = settings.archive_max_bytes
        self.max_files = settings.archive_max_files
        self.max_ratio = settings.archive_max_ratio
        self.compressed = max(compressed_size, 1)
        self.files = 0
        self.bytes = 0

    def count_entry(self, name: str) -> None:
        self.files += 1
        if self.files > self.max_files:
            raise ArchiveTooManyFilesError("archive has too many entries", limit=self.max_files, entry=name)

    def add_bytes(self, amount: int, name: str) -> None:
        self.bytes += amount
        if self.bytes > self.max_bytes:
            raise ArchiveTooLargeError("archive expands past the size cap", limit=self.max_bytes, entry=name)
        # Small archives compress well legitimately; judge the ratio once there is real volume.
        if self.bytes > 1 << 20 and self.bytes / self.compressed > self.max_ratio:
            raise ArchiveBombError(
                "compression ratio beyond the bomb threshold", ratio=round(self.bytes / self.compressed, 1),
                limit=self.max_ratio, entry=name,
            )


def safe_relpath(name: str) -> PurePosixPath:
    cleaned = name.replace("\\", "/")
    rel = PurePosixPath(cleaned)
    if (
        not cleaned or cleaned.startswith("/") or rel.is_absolute() or ".." in rel.parts
        or (len(cleaned) > 1 and cleaned[1] == ":") or "\x00" in cleaned
    ):
        raise ArchiveTraversalError(f"entry path escapes the archive root: {name!r}", entry=name)
    parts = [p for p in rel.parts if p not in ("", ".")]
    if not parts:
        raise ArchiveTraversalError(f"entry has an empty path: {name!r}", entry=name)
    return PurePosixPath(*parts)


def extract_archive(path: Path, dest: Path, settings: IngestSettings) -> None:
    """Extract ``path`` into the empty folder ``dest``; raise an :class:`ArchiveError` on any guard."""
    dest.mkdir(parents=True, exist_ok=True)
    size = path.stat().st_size
    try:
        if zipfile.is_zipfile(path):
            _extract_zip(path, dest, _Budget(settings, size))
        elif tarfile.is_tarfile(path):
            _extract_tar(path, dest, _Budget(settings, size))
        else:
            raise ArchiveCorruptError("not a zip or tar archive", path=str(path))
    except ArchiveError:
        raise
    except (
        zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError, RuntimeError, zlib.error, lzma.LZMAError
    ) as exc:  # a corrupt deflate/xz stream surfaces as the codec's own error type
        raise ArchiveCorruptError(f"archive cannot be read: {exc}", path=str(path)) from exc


def _write_stream(source: IO[bytes], target: Path, budget: _Budget, name: str, declared: int) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(target, "wb") as out:
        while block := source.read(_CHUNK):
            written += len(block)
            if written > declared:
                raise ArchiveBombError("entry is larger than its header declares", entry=name)
            budget.add_bytes(len(block), name)
            out.write(block)


def _extract_zip(path: Path, dest: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            budget.count_entry(info.filename)
            rel = safe_relpath(info.filename)
            if info.flag_bits & 0x1:
                raise ArchiveEncryptedError(f"entry is password-protected: {info.filename}", entry=info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveLinkError(f"zip entry is a symbolic link: {info.filename}", entry=info.filename)
            if info.is_dir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            if info.compress_size and info.file_size / info.compress_size > budget.max_ratio * 10:
                raise ArchiveBombError(
                    "entry compression ratio is beyond any real file", entry=info.filename,
                    ratio=round(info.file_size / info.compress_size, 1),
                )
            if budget.bytes + info.file_size > budget.max_bytes:
                raise ArchiveTooLargeError("archive declares more bytes than the cap", entry=info.filename,
                                           limit=budget.max_bytes)
            with archive.open(info) as source:
                _write_stream(source, dest / rel, budget, info.filename, info.file_size)


def _extract_tar(path: Path, dest: Path, budget: _Budget) -> None:
    real_dest = os.path.realpath(dest)
    with tarfile.open(path, mode="r:*") as archive:
        for member in archive:
            budget.count_entry(member.name)
            rel = safe_relpath(member.name)
            if member.issym() or member.islnk():
                link_base = PurePosixPath(*rel.parts[:-1]) if member.issym() else PurePosixPath()
                target = os.path.normpath(os.path.join(real_dest, str(link_base), member.linkname))
                if member.linkname.startswith("/") or not target.startswith(real_dest + os.sep):
                    raise ArchiveLinkError(
                        f"link points outside the archive: {member.name} -> {member.linkname}",
                        entry=member.name, target=member.linkname,
                    )
                continue  # links inside the tree are dropped, never materialised
            if member.isdir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                raise ArchiveLinkError(f"special file in archive: {member.name}", entry=member.name)
            if budget.bytes + member.size > budget.max_bytes:
                raise ArchiveTooLargeError("archive declares more bytes than the cap", entry=member.name,
                                           limit=budget.max_bytes)
            source = archive.extractfile(member)
            if source is None:
                raise ArchiveCorruptError(f"entry cannot be read: {member.name}", entry=member.name)
            _write_stream(source, dest / rel, budget, member.name, member.size)
            if member.mode & 0o111:
                (dest / rel).chmod(0o755)
