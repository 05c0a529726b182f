"""Copying workspaces written by untrusted code, for real: depth, links, special and sparse
files, budgets and ownership; then random hostile trees."""

from __future__ import annotations

import os
import random
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.sandbox.workspace import CopyReport, WorkspaceError, safe_copy_tree

from tests.core.sandbox.test_janitor import NOBODY, read_chain, run_unprivileged
from tests.support.trees import make_chain

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def copy(src: Path, dst: Path, *, max_bytes: int = 64 << 20, max_files: int = 100_000, **options: Any) -> CopyReport:
    return safe_copy_tree(src, dst, max_bytes=max_bytes, max_files=max_files, **options)


def reasons(report: CopyReport) -> dict[str, str]:
    return {entry["path"]: entry["reason"] for entry in report.dropped}


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    return root


def test_copies_files_directories_and_modes(src: Path, tmp_path: Path) -> None:
    (src / "sub" / "deeper").mkdir(parents=True)
    (src / "sub" / "deeper" / "data.txt").write_text("data")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    (src / "sub").chmod(0o500)

    report = copy(src, tmp_path / "dst")

    dst = tmp_path / "dst"
    assert (dst / "sub" / "deeper" / "data.txt").read_text() == "data"
    assert stat.S_IMODE((dst / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((dst / "sub").stat().st_mode) == 0o700
    assert (report.files, report.bytes, report.links, report.dropped, report.skipped) == (4, 14, 0, [], [])


def test_a_chain_1200_directories_deep_copies_and_discards(src: Path, tmp_path: Path) -> None:
    make_chain(src, 1200)
    dst = tmp_path / "dst"

    report = copy(src, dst)

    assert read_chain(dst) == (1200, b"bottom")
    assert report.files == 1201
    assert remove_tree(dst)
    assert remove_tree(src)
    assert not dst.exists()
    assert not src.exists()


@pytest.mark.slow
def test_a_chain_5000_deep_is_refused_by_default_and_copied_when_allowed(src: Path, tmp_path: Path) -> None:
    make_chain(src, 5000)
    refused, allowed = tmp_path / "refused", tmp_path / "allowed"

    with pytest.raises(WorkspaceError) as raised:
        copy(src, refused)
    copy(src, allowed, max_depth=5000)

    assert raised.value.reason == "workspace_too_deep"
    assert read_chain(allowed) == (5000, b"bottom")
    for tree in (refused, allowed, src):
        assert remove_tree(tree)
        assert not tree.exists()


def test_max_depth_counts_directory_levels(src: Path, tmp_path: Path) -> None:
    make_chain(src, 3)
    copy(src, tmp_path / "ok", max_depth=3)
    assert read_chain(tmp_path / "ok") == (3, b"bottom")
    with pytest.raises(WorkspaceError) as raised:
        copy(src, tmp_path / "refused", max_depth=2)
    assert raised.value.reason == "workspace_too_deep"


@pytest.mark.parametrize(
    ("link", "target", "inside_prefix"),
    [
        ("answer.json", "/tests/expected.json", None),
        ("answer.json", "/tests/expected.json", "/app"),
        ("answer.json", "/app/../tests/expected.json", "/app"),
        ("answer.json", "/application/real.json", "/app"),
        ("answer.json", "/app/real.json", None),
        ("sub/deeper/answer.json", "../../../x", None),
        ("sub/answer.json", "../../src/real.json", None),
        ("answer.json", "../x", None),
        ("sub/answer.json", "deeper/../../../src", None),
        ("up", "..", None),
        ("sub/root-escape", "/", None),
    ],
)
def test_links_leading_outside_are_dropped(
    src: Path, tmp_path: Path, link: str, target: str, inside_prefix: str | None
) -> None:
    (src / "sub" / "deeper").mkdir(parents=True)
    (src / "real.json").write_text("{}")
    (src / link).symlink_to(target)

    report = copy(src, tmp_path / "dst", inside_prefix=inside_prefix)

    assert reasons(report) == {link: "link_outside"}
    assert report.skipped == [link]
    assert not os.path.lexists(tmp_path / "dst" / link)


@pytest.mark.parametrize(
    ("link", "target", "inside_prefix"),
    [
        ("answer.json", "real.json", None),
        ("answer.json", "./data/../real.json", None),
        ("sub/answer.json", "../real.json", None),
        ("answer.json", "/app/real.json", "/app"),
        ("answer.json", "/app/real.json", "/app/"),
        ("sub/answer.json", "/workspace/./sub/../real.json", "/workspace"),
        ("answer.json", "hop1", None),  # hop1 -> hop2 -> real.json
        ("answer.json", "data-link/../real.json", None),  # .. applies to the link's target
        ("answer.json", "sub-link/inner.json", None),
    ],
)
def test_links_to_files_inside_become_copies(
    src: Path, tmp_path: Path, link: str, target: str, inside_prefix: str | None
) -> None:
    (src / "sub").mkdir()
    (src / "data").mkdir()
    (src / "real.json").write_text('{"answer": 42}')
    (src / "sub" / "inner.json").write_text('{"answer": 42}')
    (src / "hop1").symlink_to("hop2")
    (src / "hop2").symlink_to("real.json")
    (src / "data-link").symlink_to("data")
    (src / "sub-link").symlink_to("sub")
    (src / link).symlink_to(target)

    report = copy(src, tmp_path / "dst", inside_prefix=inside_prefix)

    copied = tmp_path / "dst" / link
    assert not copied.is_symlink()
    assert copied.is_file()
    assert copied.read_text() == '{"answer": 42}'
    assert report.dropped == []


@pytest.mark.parametrize(
    ("link", "target", "inside_prefix", "written"),
    [
        ("to-data", "data", None, "data"),
        ("sub/to-data", "../data", None, "../data"),
        ("sub/to-data", "/app/data/", "/app", "../data"),
        ("sub/to-root", "..", None, ".."),
        ("sub/to-self", ".", None, "."),
        ("data/nested/to-sub", "../../sub-link", None, "../../sub"),
        ("to-nested", "sub-link/../data/nested", None, "data/nested"),
    ],
)
def test_links_to_directories_inside_become_relative_links(
    src: Path, tmp_path: Path, link: str, target: str, inside_prefix: str | None, written: str
) -> None:
    (src / "sub").mkdir()
    (src / "data" / "nested").mkdir(parents=True)
    (src / "data" / "file.txt").write_text("x")
    (src / "sub-link").symlink_to("sub")
    (src / link).symlink_to(target)

    report = copy(src, tmp_path / "dst", inside_prefix=inside_prefix)

    dst = tmp_path / "dst"
    assert os.readlink(dst / link) == written
    assert (dst / link).resolve().is_relative_to(dst.resolve())
    assert report.dropped == []


@pytest.mark.parametrize(
    ("links", "dropped"),
    [
        ({"self": "self"}, {"self"}),
        ({"a": "b", "b": "a"}, {"a", "b"}),
        ({"grows": "grows/more"}, {"grows"}),
        ({"abs": "/app/abs"}, {"abs"}),
        # chain<k> takes 42 - k links to reach the file; a lookup may follow 40
        ({f"chain{i}": f"chain{i + 1}" for i in range(41)} | {"chain41": "real.json"}, {"chain0", "chain1"}),
    ],
)
def test_link_loops_are_dropped(src: Path, tmp_path: Path, links: dict[str, str], dropped: set[str]) -> None:
    (src / "real.json").write_text("{}")
    for name, target in links.items():
        (src / name).symlink_to(target)

    report = copy(src, tmp_path / "dst", inside_prefix="/app")

    assert reasons(report) == dict.fromkeys(dropped, "link_loop")
    for name in set(links) - dropped:
        assert (tmp_path / "dst" / name).read_text() == "{}"


@pytest.mark.parametrize("target", ["missing.json", "real.json/inner", "sub/missing/../real.json", "/app/missing"])
def test_dangling_links_are_dropped(src: Path, tmp_path: Path, target: str) -> None:
    (src / "sub").mkdir()
    (src / "real.json").write_text("{}")
    (src / "answer.json").symlink_to(target)

    report = copy(src, tmp_path / "dst", inside_prefix="/app")

    assert reasons(report) == {"answer.json": "link_dangling"}


def test_special_files_are_dropped_without_blocking(src: Path, tmp_path: Path) -> None:
    os.mkfifo(src / "fifo")
    (src / "to-fifo").symlink_to("fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(src / "sock"))
    expected = {"fifo": "special_file", "to-fifo": "special_file", "sock": "special_file"}
    if os.geteuid() == 0:
        os.mknod(src / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        expected["null"] = "special_file"
    reports: list[CopyReport] = []

    worker = threading.Thread(target=lambda: reports.append(copy(src, tmp_path / "dst")), daemon=True)
    worker.start()
    worker.join(timeout=30)
    server.close()

    assert not worker.is_alive(), "the copy blocked on a special file"
    assert reasons(reports[0]) == expected
    assert os.listdir(tmp_path / "dst") == []


def test_sparse_files_keep_their_holes_and_only_data_counts(src: Path, tmp_path: Path) -> None:
    data = os.urandom(4096)
    with open(src / "sparse.bin", "wb") as sparse:
        sparse.truncate(1 << 30)
        sparse.seek(512 << 20)
        sparse.write(data)

    started = time.monotonic()
    report = copy(src, tmp_path / "dst", max_bytes=1 << 20)
    elapsed = time.monotonic() - started

    copied = tmp_path / "dst" / "sparse.bin"
    info = copied.stat()
    assert elapsed < 10
    assert info.st_size == 1 << 30
    assert info.st_blocks * 512 <= 64 << 10
    assert report.bytes == 4096
    with open(copied, "rb") as read:
        read.seek(512 << 20)
        assert read.read(4096) == data
        read.seek((512 << 20) - 4096)
        assert read.read(4096) == bytes(4096)


def test_a_budget_exceeded_is_refused_without_writing_past_it(src: Path, tmp_path: Path) -> None:
    for index in range(10):
        (src / f"part{index}.bin").write_bytes(os.urandom(200 << 10))

    with pytest.raises(WorkspaceError) as raised:
        copy(src, tmp_path / "dst", max_bytes=1 << 20)

    assert raised.value.reason == "workspace_too_large"
    written = sum(path.stat().st_size for path in (tmp_path / "dst").iterdir())
    assert written <= 1 << 20


def test_one_file_over_the_budget_is_refused(src: Path, tmp_path: Path) -> None:
    (src / "big.bin").write_bytes(os.urandom(3 << 20))
    with pytest.raises(WorkspaceError) as raised:
        copy(src, tmp_path / "dst", max_bytes=1 << 20)
    assert raised.value.reason == "workspace_too_large"


def test_too_many_entries_are_refused(src: Path, tmp_path: Path) -> None:
    for index in range(20):
        (src / f"f{index}").write_text("x")
    with pytest.raises(WorkspaceError) as raised:
        copy(src, tmp_path / "dst", max_files=10)
    assert raised.value.reason == "workspace_too_large"


def test_links_to_a_big_file_count_against_the_budget_each_time(src: Path, tmp_path: Path) -> None:
    (src / "big.bin").write_bytes(os.urandom(300 << 10))
    for index in range(5):
        (src / f"copy{index}").symlink_to("big.bin")
    with pytest.raises(WorkspaceError) as raised:
        copy(src, tmp_path / "dst", max_bytes=1 << 20)
    assert raised.value.reason == "workspace_too_large"


@needs_root
def test_owner_is_given_everything_created(src: Path, tmp_path: Path) -> None:
    (src / "sub" / "deeper").mkdir(parents=True)
    (src / "sub" / "deeper" / "file.txt").write_text("x")
    (src / "to-file").symlink_to("sub/deeper/file.txt")
    (src / "to-dir").symlink_to("sub")
    dst = tmp_path / "dst"

    copy(src, dst, owner=(NOBODY, NOBODY + 1))

    created = [dst, *dst.rglob("*")]
    assert len(created) == 6
    assert {(path.lstat().st_uid, path.lstat().st_gid) for path in created} == {(NOBODY, NOBODY + 1)}
    assert (dst / "to-dir").is_symlink()


def test_setuid_and_setgid_bits_are_not_copied(src: Path, tmp_path: Path) -> None:
    (src / "tool").write_text("#!/bin/sh\n")
    (src / "tool").chmod(0o6755)
    (src / "shared").mkdir()
    (src / "shared").chmod(0o3775)

    copy(src, tmp_path / "dst")

    assert stat.S_IMODE((tmp_path / "dst" / "tool").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "dst" / "shared").stat().st_mode) == 0o775


def test_hardlinks_are_copied_as_separate_files(src: Path, tmp_path: Path) -> None:
    (src / "a.txt").write_text("same")
    os.link(src / "a.txt", src / "b.txt")

    copy(src, tmp_path / "dst")

    a, b = tmp_path / "dst" / "a.txt", tmp_path / "dst" / "b.txt"
    assert a.stat().st_ino != b.stat().st_ino
    assert a.stat().st_nlink == b.stat().st_nlink == 1
    a.write_text("changed")
    assert b.read_text() == "same"
    assert (src / "b.txt").read_text() == "same"


def test_unreadable_entries_are_dropped_not_raised(tmp_path: Path) -> None:
    def check(work: Path) -> None:
        src = work / "src"
        (src / "locked" / "inner").mkdir(parents=True)
        (src / "no-search").mkdir()
        (src / "no-search" / "file.txt").write_text("x")
        (src / "secret.txt").write_text("x")
        (src / "to-secret").symlink_to("locked/inner")
        (src / "locked").chmod(0o000)
        (src / "no-search").chmod(0o600)
        (src / "secret.txt").chmod(0o000)

        report = copy(src, work / "dst")

        assert reasons(report) == {
            "locked": "unreadable",
            "no-search": "unreadable",
            "secret.txt": "unreadable",
            "to-secret": "link_unreadable",
        }
        assert remove_tree(src)
        assert remove_tree(work / "dst")

    run_unprivileged(tmp_path / "unprivileged", check)


# Random hostile trees: whatever is in them, the copy raises nothing but WorkspaceError, holds
# no special file, no link leading out of it and nothing read from outside the source, copies
# regular files and the files links lead to faithfully, and both trees are removed completely.

ODD_NAMES = ["a", "data", "ü", "名前", "with space", "-dash", ".hidden", "new\nline", "tab\t", "*", "...", "\\"]
ODD_NAMES += [os.fsdecode(b"\xff\xfe-not-utf8"), "x" * 200]
OUTSIDE_TARGETS = ["/tests/expected.json", "/etc/passwd", "/", "/proc/self/root", "/app/../tests", "/dev/zero"]
SECRET = b"OUTSIDE-SECRET"


def build_hostile_tree(rng: random.Random, root: Path, secret: Path) -> None:
    root.mkdir()
    directories, entries = [root], [root]
    for index in range(rng.randint(3, 40)):
        parent = rng.choice(directories)
        path = parent / f"{rng.choice(ODD_NAMES)}{index}"
        kind = rng.choice(["dir", "dir", "file", "file", "sparse", "fifo", "hardlink", "link", "link", "link", "dev"])
        if kind == "dir":
            path.mkdir()
            directories.append(path)
        elif kind == "file":
            path.write_bytes(rng.randbytes(rng.randint(0, 5000)))
        elif kind == "sparse":
            with open(path, "wb") as sparse:
                sparse.truncate(rng.randint(1, 1 << 20))
                sparse.seek(rng.randint(0, 1 << 20))
                sparse.write(rng.randbytes(rng.randint(1, 100)))
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "hardlink" and (files := [e for e in entries if stat.S_ISREG(e.lstat().st_mode)]):
            os.link(rng.choice(files), path)
        elif kind == "dev" and os.geteuid() == 0:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))
        else:
            path.symlink_to(random_link_target(rng, root, path, [*entries, secret]))
        entries.append(path)
    locked = rng.sample(directories[1:], k=min(len(directories) - 1, rng.randint(0, 2)))
    for directory in sorted(locked, key=lambda path: len(path.parts), reverse=True):
        directory.chmod(0o000)


def random_link_target(rng: random.Random, root: Path, link: Path, entries: list[Path]) -> str:
    entry, parent = rng.choice(entries), link.parent
    choice = rng.randrange(8)
    if choice == 0:
        return os.path.relpath(entry, parent)
    if choice == 1:
        return "/app/" + os.path.relpath(entry, root)
    if choice == 2:
        return rng.choice([*OUTSIDE_TARGETS, str(entries[-1].absolute())])
    if choice == 3:
        return "../" * rng.randint(1, 4) + rng.choice(ODD_NAMES)
    if choice == 4:
        return os.path.relpath(entry, parent) + "/" + rng.choice(["..", "x", ".", "../.."])
    if choice == 5:
        return "/".join(rng.choice(["..", ".", "a0", rng.choice(ODD_NAMES)]) for _ in range(rng.randint(1, 6)))
    if choice == 6:
        return rng.choice([link.name, f"{link.name}/x", f"../{parent.name}/{link.name}"])
    return os.path.relpath(parent, root) + "/../" * rng.randint(0, 3)


def check_copy(src: Path, dst: Path) -> None:
    real_dst = os.path.realpath(dst)
    for directory, subdirectories, files in os.walk(dst):
        for name in subdirectories + files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            assert stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode), path
            assert not info.st_mode & (stat.S_ISUID | stat.S_ISGID), path
            if stat.S_ISLNK(info.st_mode):
                assert os.path.commonpath([os.path.realpath(path), real_dst]) == real_dst, path
                assert not os.readlink(path).startswith("/"), path
            source = Path(src, os.path.relpath(path, dst))
            if stat.S_ISREG(info.st_mode):
                copied = Path(path).read_bytes()
                assert SECRET not in copied, path
                try:
                    original = source.read_bytes()
                except OSError:  # locked away (unprivileged), or reached through /app
                    continue
                assert copied == original, path


def copy_hostile_trees(work: Path, seeds: range) -> None:
    secret = work / "outside" / "secret.json"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    for seed in seeds:
        rng = random.Random(seed)
        src, dst = work / f"src{seed}", work / f"dst{seed}"
        build_hostile_tree(rng, src, secret)
        max_bytes, max_files = rng.choice([1 << 14, 1 << 22, 1 << 22]), rng.choice([30, 1000, 1000])
        try:
            copy(src, dst, max_bytes=max_bytes, max_files=max_files, inside_prefix="/app")
        except WorkspaceError:
            pass
        else:
            check_copy(src, dst)
        assert remove_tree(dst), f"seed {seed}"
        assert remove_tree(src), f"seed {seed}"
        assert not os.path.lexists(dst) and not os.path.lexists(src), f"seed {seed}"
    assert remove_tree(secret.parent)


def test_random_hostile_trees(tmp_path: Path) -> None:
    copy_hostile_trees(tmp_path, range(300))
    assert os.listdir(tmp_path) == []


def test_random_hostile_trees_unprivileged(tmp_path: Path) -> None:
    run_unprivileged(tmp_path / "unprivileged", lambda work: copy_hostile_trees(work, range(1000, 1060)))
