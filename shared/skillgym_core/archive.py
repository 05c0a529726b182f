"""Deterministic tar.gz packing of directories and safe unpacking of untrusted archives."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path, PurePosixPath

from skillgym_core.errors import SkillGymError


class UnsafeArchiveError(SkillGymError):
    reason = "unsafe_archive"


def pack_dir(root: Path) -> bytes:
    """Pack ``root`` into gzip'd tar bytes that depend only on paths, contents and modes."""
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=6) as gz,  # zlib's default: level 9 costs ~40% more CPU for ~2% smaller skill archives
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for path in sorted(root.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            rel = path.relative_to(root).as_posix()
            info = tarfile.TarInfo(rel)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                data = path.read_bytes()
                info.size = len(data)
                info.mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


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
