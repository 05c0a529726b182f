"""Removing scratch trees for real: any depth, locked directories, links, and mounts inside."""

from __future__ import annotations

import os
import subprocess
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from skillgym_core.sandbox import janitor
from skillgym_core.sandbox.janitor import discard_tree, mount_points_below, remove_tree

from tests.support.trees import make_chain

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")


def read_chain(root: Path) -> tuple[int, bytes]:
    """How many ``d`` directories deep the chain below ``root`` goes, and its leaf's bytes."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        while True:
            try:
                child = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                break
            os.close(fd)
            fd = child
            depth += 1
        leaf_fd = os.open("leaf", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
        leaf = os.read(leaf_fd, 1 << 16)
        os.close(leaf_fd)
        return depth, leaf
    finally:
        os.close(fd)


def run_unprivileged(work: Path, check: Callable[[Path], None]) -> None:
    """``check(work)`` as an unprivileged user: as nobody in a forked child (given ``work``
    relative to its working directory) when the tests run as root."""
    work.mkdir(exist_ok=True)
    if os.geteuid() != 0:
        check(work)
        return
    os.chown(work, NOBODY, NOBODY)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(read)
        status = 0
        try:
            os.chdir(work)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            check(Path("."))
        except BaseException:
            os.write(write, traceback.format_exc().encode())
            status = 1
        os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        report = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, report


def mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here: {done.stderr.strip()}")


def test_remove_tree_deletes_a_chain_5000_directories_deep(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    make_chain(tree, 5000)
    assert read_chain(tree) == (5000, b"bottom")
    assert remove_tree(tree)
    assert not tree.exists()
    assert tmp_path.exists()


def test_remove_tree_removes_files_links_and_missing_paths(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    file = tmp_path / "file.txt"
    file.write_text("x")
    link = tmp_path / "link"
    link.symlink_to(outside)

    assert remove_tree(file)
    assert remove_tree(link)
    assert remove_tree(tmp_path / "never-existed")
    assert not file.exists()
    assert not link.is_symlink()
    assert (outside / "keep.txt").read_text() == "keep"


def test_remove_tree_never_follows_links_inside_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "keep.txt").write_text("keep")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "to-dir").symlink_to(outside)
    (tree / "a" / "b" / "to-file").symlink_to(outside / "sub" / "keep.txt")
    (tree / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tree / "a" / "fifo")

    assert remove_tree(tree)
    assert not tree.exists()
    assert (outside / "sub" / "keep.txt").read_text() == "keep"


def test_remove_tree_unlocks_directories_its_owner_cannot_enter(tmp_path: Path) -> None:
    def check(work: Path) -> None:
        tree = work / "tree"
        for mode, name in [(0o000, "none"), (0o500, "read-search"), (0o100, "search-only"), (0o600, "no-search")]:
            locked = tree / "a" / name
            (locked / "inner").mkdir(parents=True)
            (locked / "inner" / "file.txt").write_text("x")
            (locked / "file.txt").write_text("x")
            locked.chmod(mode)
        (tree / "a").chmod(0o500)
        tree.chmod(0o000)
        assert remove_tree(tree)
        assert not os.path.lexists(tree)

    run_unprivileged(tmp_path / "unprivileged", check)


def test_discard_tree_deletes_in_the_background(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "file.txt").write_text("x")
    discard_tree(tree)
    janitor.wait_idle()
    assert not tree.exists()


@needs_root
def test_discard_tree_unmounts_what_is_mounted_inside_and_never_deletes_through_it(tmp_path: Path) -> None:
    precious = tmp_path / "host-tests"
    precious.mkdir()
    (precious / "expected.json").write_text("{}")
    scratch = tmp_path / "scratch"
    volume = scratch / "app" / "with space"
    volume.mkdir(parents=True)
    mount("-t", "tmpfs", "tmpfs", str(volume))
    (volume / "nested").mkdir()
    mount("-t", "tmpfs", "tmpfs", str(volume / "nested"))
    (volume / "nested" / "answer.json").write_text("{}")
    (volume / "tests").mkdir()
    mount("--bind", str(precious), str(volume / "tests"))
    assert set(mount_points_below(scratch)) == {str(volume), str(volume / "nested"), str(volume / "tests")}
    assert mount_points_below(scratch)[-1] == str(volume)  # deepest first

    discard_tree(scratch)
    janitor.wait_idle()

    assert not scratch.exists()
    assert mount_points_below(scratch) == []
    assert (precious / "expected.json").read_text() == "{}"


@needs_root
def test_remove_tree_unmounts_a_mount_on_the_path_itself(tmp_path: Path) -> None:
    volume = tmp_path / "volume"
    volume.mkdir()
    mount("-t", "tmpfs", "tmpfs", str(volume))
    make_chain(volume, 50)
    assert remove_tree(volume)
    assert not volume.exists()
    assert mount_points_below(volume) == []
