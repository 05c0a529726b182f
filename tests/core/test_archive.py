"""Archives: packing is deterministic; unpacking refuses anything that could escape or explode."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from skillgym_core.archive import UnsafeArchiveError, pack_dir, unpack_dir


def _make_tree(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    (root / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "scripts" / "run.sh").chmod(0o755)
    (root / "data.bin").write_bytes(bytes(range(256)) * 10)
    (root / "empty").mkdir()
    return root


def test_pack_is_deterministic_across_copies_and_mtimes(tmp_path: Path) -> None:
    first = _make_tree(tmp_path / "a")
    second = tmp_path / "b"
    shutil.copytree(first, second)
    later = time.time() + 3600
    for path in second.rglob("*"):
        os.utime(path, (later, later))

    assert pack_dir(first) == pack_dir(first)
    assert pack_dir(first) == pack_dir(second)


def test_pack_depends_on_content(tmp_path: Path) -> None:
    root = _make_tree(tmp_path / "a")
    before = pack_dir(root)
    (root / "SKILL.md").write_text("changed\n")
    assert pack_dir(root) != before


def test_unpack_restores_files_and_modes_and_repacks_identically(tmp_path: Path) -> None:
    root = _make_tree(tmp_path / "src")
    packed = pack_dir(root)

    out = unpack_dir(packed, tmp_path / "out")

    assert (out / "SKILL.md").read_text() == (root / "SKILL.md").read_text()
    assert (out / "data.bin").read_bytes() == (root / "data.bin").read_bytes()
    assert os.access(out / "scripts" / "run.sh", os.X_OK)
    assert not os.access(out / "SKILL.md", os.X_OK)
    assert (out / "empty").is_dir()
    assert pack_dir(out) == packed


def test_pack_leaves_out_symlinks(tmp_path: Path) -> None:
    root = _make_tree(tmp_path / "src")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    (root / "link").symlink_to(secret)

    with tarfile.open(fileobj=io.BytesIO(pack_dir(root)), mode="r:gz") as tar:
        names = tar.getnames()

    assert "link" not in names
    assert "SKILL.md" in names


def _tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def _device(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3
    return info, None


def _fifo(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.FIFOTYPE
    return info, None


HOSTILE: dict[str, Callable[[], bytes]] = {
    "parent-traversal": lambda: _tar(_file("ok.txt"), _file("../escaped.txt")),
    "nested-traversal": lambda: _tar(_file("a/../../escaped.txt")),
    "absolute-path": lambda: _tar(_file("/tmp/escaped-absolute.txt")),
    "symlink": lambda: _tar(_link("link", "/etc/passwd", tarfile.SYMTYPE)),
    "hardlink": lambda: _tar(_file("ok.txt"), _link("hard", "ok.txt", tarfile.LNKTYPE)),
    "device": lambda: _tar(_device("null")),
    "fifo": lambda: _tar(_fifo("pipe")),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_archives_are_rejected(name: str, tmp_path: Path) -> None:
    dest = tmp_path / "box" / "dest"
    with pytest.raises(UnsafeArchiveError) as caught:
        unpack_dir(HOSTILE[name](), dest)
    assert caught.value.reason == "unsafe_archive"
    assert not (tmp_path / "box" / "escaped.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()
    assert not any(path.is_symlink() for path in dest.rglob("*"))


def test_size_cap_counts_the_whole_archive(tmp_path: Path) -> None:
    archive = _tar(_file("a.bin", b"a" * 600), _file("b.bin", b"b" * 600))
    with pytest.raises(UnsafeArchiveError) as caught:
        unpack_dir(archive, tmp_path / "out", max_bytes=1000)
    assert caught.value.details["limit"] == 1000
    assert not (tmp_path / "out" / "b.bin").exists()

    unpack_dir(archive, tmp_path / "fits", max_bytes=1200)
    assert (tmp_path / "fits" / "b.bin").read_bytes() == b"b" * 600


def test_file_count_cap(tmp_path: Path) -> None:
    archive = _tar(*(_file(f"f{i}.txt") for i in range(5)))
    with pytest.raises(UnsafeArchiveError):
        unpack_dir(archive, tmp_path / "out", max_files=4)
    assert len(list(unpack_dir(archive, tmp_path / "ok", max_files=5).iterdir())) == 5


def test_bytes_that_are_no_archive_get_a_typed_error(tmp_path: Path) -> None:
    from skillgym_core.archive import UnsafeArchiveError, unpack_dir

    with pytest.raises(UnsafeArchiveError, match="not a readable tar archive"):
        unpack_dir(b"definitely not a tarball", tmp_path / "out")


def tarfile_packing(root: Path) -> bytes:
    """The same members written by ``tarfile`` itself (PAX format, owner 0, mtime 0)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(root.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            info = tarfile.TarInfo(path.relative_to(root).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if path.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                data = path.read_bytes()
                info.size, info.mode = len(data), 0o755 if path.stat().st_mode & 0o111 else 0o644
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_packing_writes_exactly_the_tar_stream_tarfile_writes(tmp_path: Path) -> None:
    root = _make_tree(tmp_path / "src")
    (root / "a-c").write_text("sorts after a/ as a path, before it as a string\n")
    (root / "a").mkdir()
    (root / "a" / "b").write_text("inside a\n")
    deep = root / ("long-directory-name-" * 4) / ("and-a-long-file-name-" * 3)
    deep.parent.mkdir()
    deep.write_text("a path past ustar's 100 bytes takes a PAX header\n")
    (root / "naïve-ünïcode.md").write_text("a non-ASCII name takes a PAX header\n")
    (root / "exactly-block.bin").write_bytes(b"x" * 1024)
    (root / "link").symlink_to(root / "SKILL.md")
    os.mkfifo(root / "fifo")

    packed = gzip.decompress(pack_dir(root))

    assert packed == tarfile_packing(root)
    with tarfile.open(fileobj=io.BytesIO(packed)) as tar:
        names = tar.getnames()
    assert "link" not in names and "fifo" not in names and names.index("a/b") < names.index("a-c")
