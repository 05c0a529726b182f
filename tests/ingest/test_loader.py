"""The scandir walk in the loader lists exactly what an ``os.walk`` of the folder lists."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import pytest
from skillgym_ingest.loader import IGNORED_DIRS, load_folder


def _walk_reference(root: Path, max_files: int) -> tuple[list[tuple[str, int, str]], list[str], list[str], bool]:
    files: list[tuple[str, int, str]] = []
    links: list[str] = []
    skipped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        kept = []
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if os.path.islink(full):
                links.append(rel)
            elif name in IGNORED_DIRS:
                skipped.append(rel)
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if os.path.islink(full):
                links.append(rel)
                continue
            if len(files) >= max_files:
                return files, links, skipped, True
            data = Path(full).read_bytes()
            files.append((rel, len(data), hashlib.sha256(data).hexdigest()))
    return files, links, skipped, False


def _random_tree(root: Path, rng: random.Random) -> None:
    folders = [root]
    for index in range(rng.randint(1, 25)):
        parent = rng.choice(folders)
        kind = rng.random()
        name = rng.choice(["a", "B", "scripts", "node_modules", ".git", "z", "m-1", "_x"]) + str(index % 3)
        if kind < 0.3:
            folder = parent / name
            folder.mkdir(exist_ok=True)
            folders.append(folder)
        elif kind < 0.4:
            link = parent / f"link{index}"
            if not link.exists() and not link.is_symlink():
                link.symlink_to(rng.choice(["/etc", "../", "missing", str(root)]))
        else:
            (parent / f"{name}.txt").write_bytes(rng.randbytes(rng.randint(0, 50)))
    if rng.random() < 0.5:
        (rng.choice(folders) / "node_modules").mkdir(exist_ok=True)


@pytest.mark.parametrize("seed", range(12))
def test_load_folder_lists_what_os_walk_lists(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "skill"
    root.mkdir()
    _random_tree(root, rng)
    max_files = rng.choice([2, 5, 1000])
    folder = load_folder(root, "src", max_files=max_files, max_bytes=1 << 20, max_file_bytes=1 << 20)
    files, links, skipped, truncated = _walk_reference(root, max_files)
    assert [(f.path, f.size, f.sha256) for f in folder.files] == files
    assert [link.path for link in folder.links] == links
    assert folder.skipped_dirs == skipped
    assert folder.truncated == truncated
    assert all(f.data is not None and len(f.data) == f.size for f in folder.files)


def test_large_files_are_hashed_not_kept(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * 5000)
    folder = load_folder(tmp_path, "src", max_files=10, max_bytes=1 << 20, max_file_bytes=1000)
    [big] = folder.files
    assert big.data is None and big.size == 5000 and big.sha256 == hashlib.sha256(b"x" * 5000).hexdigest()
