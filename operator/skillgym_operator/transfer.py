"""In-pod halves of a sandbox run (``python -m skillgym_operator.transfer fetch|push``).

``fetch`` (init container) unpacks each mount's archive and the stdin from the store into the
pod's volumes, then writes the files the plan carries (an image build's Dockerfile lines). ``push`` (sidecar) waits for the run container's exit code, then uploads every
writable mount, stdout/stderr (capped) and ``result.json``, reading what the command wrote
without following links (:mod:`skillgym_operator.untrusted_files`). The plan arrives as JSON in
``SKILLGYM_SANDBOX_PLAN``; store settings come from the usual ``SKILLGYM_`` environment."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from skillgym_core.archive import unpack_dir
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store, put_json
from skillgym_core.store.factory import make_store

from skillgym_operator.resources import (
    EXIT_CODE_FILE,
    OUTCOME_FILE,
    PLAN_ENV,
    STDERR_FILE,
    STDIN_FILE,
    STDOUT_FILE,
)
from skillgym_operator.untrusted_files import pack_tree, read_capped

SMALL_FILE_BYTES = 64


def fetch(plan: dict[str, Any], store: Store, io_dir: Path) -> None:
    for mount in plan["mounts"]:
        path = Path(mount["path"])
        path.mkdir(parents=True, exist_ok=True)
        if mount.get("key"):
            unpack_dir(store.get_bytes(mount["key"]), path)
    for write in plan.get("writes") or []:
        with Path(write["path"]).open("a" if write.get("append") else "w") as file:
            if write.get("append") and file.tell() and not _ends_with_newline(Path(write["path"])):
                file.write("\n")
            file.write(write["text"])
    if plan.get("stdinKey"):
        (io_dir / Path(STDIN_FILE).name).write_bytes(store.get_bytes(plan["stdinKey"]))


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as file:
        file.seek(-1, 2)
        return file.read(1) == b"\n"


def _small_text(path: Path) -> str:
    return read_capped(path, SMALL_FILE_BYTES)[0].decode(errors="replace").strip()


def wait_for_exit(io_dir: Path, deadline_s: float, poll_s: float = 0.2) -> int | None:
    exit_file = io_dir / Path(EXIT_CODE_FILE).name
    give_up = time.monotonic() + deadline_s
    while time.monotonic() < give_up:
        text = _small_text(exit_file)
        if text:
            return int(text) if text.lstrip("-").isdigit() else None
        time.sleep(poll_s)
    return None


def push(plan: dict[str, Any], store: Store, io_dir: Path, *, grace_s: float = 30.0) -> dict[str, Any]:
    started = time.monotonic()
    exit_code = wait_for_exit(io_dir, float(plan["wallSeconds"]) + grace_s)
    outcome = _small_text(io_dir / Path(OUTCOME_FILE).name)
    if exit_code is None:
        outcome = "timeout"
    prefix = plan["outputPrefix"].rstrip("/")
    limit = int(plan["outputBytes"])
    stdout, out_cut = read_capped(io_dir / Path(STDOUT_FILE).name, limit)
    stderr, err_cut = read_capped(io_dir / Path(STDERR_FILE).name, limit)
    store.put_bytes(f"{prefix}/stdout", stdout, "text/plain")
    store.put_bytes(f"{prefix}/stderr", stderr, "text/plain")
    uploaded = {}
    for mount in plan["mounts"]:
        if mount.get("writable") and mount.get("resultKey"):
            store.put_bytes(mount["resultKey"], pack_tree(Path(mount["path"])), "application/gzip")
            uploaded[mount["target"]] = mount["resultKey"]
    result = {
        "exitCode": exit_code,
        "outcome": outcome or "ok",
        "truncated": out_cut or err_cut,
        "waitedSeconds": round(time.monotonic() - started, 3),
        "mounts": uploaded,
    }
    put_json(store, f"{prefix}/result.json", result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="skillgym_operator.transfer")
    parser.add_argument("action", choices=["fetch", "push"])
    parser.add_argument("--io-dir", default=str(Path(STDOUT_FILE).parent))
    args = parser.parse_args(argv)
    plan = json.loads(os.environ[PLAN_ENV])
    store = make_store(CommonSettings())
    io_dir = Path(args.io_dir)
    if args.action == "fetch":
        fetch(plan, store, io_dir)
    else:
        push(plan, store, io_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
