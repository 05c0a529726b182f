"""The in-pod fetch/push halves against a real store, with the real run wrapper in between."""

from __future__ import annotations

import gzip
import os
import subprocess
from pathlib import Path

from skillgym_core.archive import pack_dir, unpack_dir
from skillgym_core.store.base import get_json
from skillgym_core.store.local import LocalStore
from skillgym_operator import transfer
from skillgym_operator.builders.sandbox import RUN_WRAPPER
from skillgym_operator.untrusted_files import pack_tree


def test_fetch_run_push_round_trip(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.txt").write_text("alpha")
    store.put_bytes("in/app.tar.gz", pack_dir(source))
    store.put_bytes("in/stdin", b"piped")
    io_dir, app = tmp_path / "io", tmp_path / "mount0"
    io_dir.mkdir()
    plan = {
        "mounts": [
            {
                "path": str(app),
                "target": "/app",
                "key": "in/app.tar.gz",
                "writable": True,
                "resultKey": "out/app.tar.gz",
            }
        ],
        "stdinKey": "in/stdin",
        "outputPrefix": "out",
        "outputBytes": 4,
        "wallSeconds": 5,
    }
    transfer.fetch(plan, store, io_dir)
    assert (app / "a.txt").read_text() == "alpha" and (io_dir / "stdin").read_bytes() == b"piped"

    wrapper = RUN_WRAPPER.replace("io=/skillgym/io", f"io={io_dir}")
    command = f"cat; echo; echo changed > {app}/b.txt; echo e >&2; exit 4"
    done = subprocess.run(["sh", "-c", wrapper, "sandbox", "sh", "-c", command],
                          env={"SKILLGYM_WALL_SECONDS": "5", "PATH": "/usr/bin:/bin"}, check=False)  # fmt: skip
    assert done.returncode == 4

    result = transfer.push(plan, store, io_dir, grace_s=1)
    assert result == {**result, "exitCode": 4, "outcome": "ok", "truncated": True, "mounts": {"/app": "out/app.tar.gz"}}
    assert store.get_bytes("out/stdout") == b"pipe" and store.get_bytes("out/stderr") == b"e\n"
    assert get_json(store, "out/result.json")["exitCode"] == 4
    unpacked = unpack_dir(store.get_bytes("out/app.tar.gz"), tmp_path / "back")
    assert (unpacked / "b.txt").read_text() == "changed\n"


def test_push_gives_up_when_the_command_never_reports(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    (tmp_path / "io").mkdir()
    plan = {"mounts": [], "stdinKey": None, "outputPrefix": "o", "outputBytes": 10, "wallSeconds": 0.1}
    result = transfer.push(plan, store, tmp_path / "io", grace_s=0.1)
    assert (result["exitCode"], result["outcome"]) == (None, "timeout")


def test_push_never_follows_links_the_command_left(tmp_path: Path) -> None:
    """A link planted in the I/O directory or a writable mount must not make push read its own
    files (say /proc/self/environ, which holds the store secret in the push container)."""
    store = LocalStore(tmp_path / "store")
    secret = tmp_path / "secret"
    secret.write_text("S3_SECRET")
    (tmp_path / "secret-dir").mkdir()
    (tmp_path / "secret-dir" / "key").write_text("S3_SECRET")
    io_dir, app = tmp_path / "io", tmp_path / "mount0"
    io_dir.mkdir()
    app.mkdir()
    (io_dir / "stdout").symlink_to(secret)
    (io_dir / "outcome").symlink_to(secret)
    os.mkfifo(io_dir / "stderr")  # would block a plain open forever
    (io_dir / "exit_code").write_text("0\n")
    (app / "kept.txt").write_text("mine")
    (app / "run.sh").write_text("#!/bin/sh\n")
    (app / "run.sh").chmod(0o755)
    (app / "sub").mkdir()
    (app / "sub" / "leak").symlink_to(secret)
    (app / "linked-dir").symlink_to(tmp_path / "secret-dir")
    plan = {
        "mounts": [{"path": str(app), "target": "/app", "writable": True, "resultKey": "out/app.tar.gz"}],
        "stdinKey": None,
        "outputPrefix": "out",
        "outputBytes": 100,
        "wallSeconds": 1,
    }
    result = transfer.push(plan, store, io_dir, grace_s=1)
    assert result["outcome"] == "ok" and result["exitCode"] == 0
    assert store.get_bytes("out/stdout") == b"" and store.get_bytes("out/stderr") == b""
    archive = store.get_bytes("out/app.tar.gz")
    assert b"S3_SECRET" not in gzip.decompress(archive)
    unpacked = unpack_dir(archive, tmp_path / "back")
    files = sorted(str(p.relative_to(unpacked)) for p in unpacked.rglob("*"))
    assert files == ["kept.txt", "run.sh", "sub"]
    assert (unpacked / "run.sh").stat().st_mode & 0o111


def test_pack_tree_matches_pack_dir(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "c.txt").write_text("deep")
    (root / "empty").mkdir()
    (root / "x.sh").write_text("echo")
    (root / "x.sh").chmod(0o700)
    left = unpack_dir(pack_tree(root), tmp_path / "left")
    right = unpack_dir(pack_dir(root), tmp_path / "right")

    def listing(base: Path) -> list[tuple[str, int, bytes]]:
        return [
            (str(p.relative_to(base)), p.stat().st_mode, p.read_bytes() if p.is_file() else b"")
            for p in sorted(base.rglob("*"))
        ]

    assert listing(left) == listing(right)


def test_fetch_writes_and_appends_the_files_its_plan_carries(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    source = tmp_path / "src"
    source.mkdir()
    (source / "Dockerfile").write_text("FROM base:1\nUSER agent")  # no final newline
    store.put_bytes("ctx.tar.gz", pack_dir(source))
    context = tmp_path / "context"
    plan = {"mounts": [{"path": str(context), "key": "ctx.tar.gz"}], "stdinKey": None, "writes": [
        {"path": str(context / "remap.sh"), "text": "echo remap\n"},
        {"path": str(context / "Dockerfile"), "text": "USER root\nRUN sh remap.sh\n", "append": True},
    ]}  # fmt: skip
    transfer.fetch(plan, store, tmp_path)
    assert (context / "Dockerfile").read_text() == "FROM base:1\nUSER agent\nUSER root\nRUN sh remap.sh\n"
    assert (context / "remap.sh").read_text() == "echo remap\n"
