"""The in-pod fetch/push halves against a real store, with the real run wrapper in between."""

from __future__ import annotations

import subprocess
from pathlib import Path

from skillgym_core.archive import pack_dir, unpack_dir
from skillgym_core.store.base import get_json
from skillgym_core.store.local import LocalStore
from skillgym_operator import transfer
from skillgym_operator.builders.sandbox import RUN_WRAPPER


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
