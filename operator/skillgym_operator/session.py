"""The two in-pod halves of a sandbox session (a SandboxRun with ``spec.session``).

The run container's step loop (:data:`STEP_LOOP`, POSIX sh, no credentials) waits for step
``n`` under ``<io>/steps/<n>/``, runs its command with the session's shell in a process group of
its own (killed at the step's timeout), caps stdout and stderr, and marks the step done.

The relay (``python -m skillgym_operator.session``, beside the push container and like it holding
the store credentials) takes each request from the store, writes it into the step directory,
waits for the loop, and writes the reply back. The command may rewrite anything under ``<io>`` at
any moment, so the relay opens every path relative to an already-open directory without
following links, reads only regular files, and never reads more than the cap."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import secrets
import stat
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from skillgym_core.errors import ArtifactNotFound, StoreError
from skillgym_core.sandbox import steps
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store, get_json, put_json
from skillgym_core.store.factory import make_store

from skillgym_operator.resources import EXIT_CODE_FILE, IO_DIR, PLAN_ENV
from skillgym_operator.untrusted_files import DIR_FLAGS, FILE_FLAGS, READ_CHUNK

log = logging.getLogger(__name__)
STEPS_DIR = "steps"
STOP_FILE = "stop"
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

# $@: the session's shell (e.g. bash -lc); each step's command is its last argument.
STEP_LOOP = (
    f"steps={IO_DIR}/{STEPS_DIR}\n"
    + """\
cap=$((SKILLGYM_STEP_OUTPUT_BYTES + 1))
n=1
while :; do
  d="$steps/$n"
  while [ ! -f "$d/ready" ]; do
    [ -e "$steps/stop" ] && exit 0
    sleep 0.02
  done
  setsid sh -c '
    d=$1; cap=$2; shift 2
    { { "$@" "$(cat "$d/command")" <"$d/stdin"; echo $? >"$d/code"; } | head -c "$cap" >"$d/stdout"; } 2>&1 |
      head -c "$cap" >"$d/stderr"
  ' step "$d" "$cap" "$@" &
  child=$!
  ( sleep "$(cat "$d/timeout")"; echo timeout >"$d/outcome"; kill -KILL -"$child" 2>/dev/null ) &
  timer=$!
  wait "$child"
  kill -KILL "$timer" 2>/dev/null
  # printf, not ':': a failed redirection of a special built-in would end the loop.
  { printf '' >"$d/done.tmp" && mv -f "$d/done.tmp" "$d/done"; } 2>/dev/null
  n=$((n + 1))
done
"""
)


def _open_file(name: str, dir_fd: int) -> int | None:
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def read_at(dir_fd: int, name: str, limit: int) -> bytes:
    """Up to ``limit`` bytes of the regular file ``name`` in ``dir_fd``; nothing for anything else."""
    fd = _open_file(name, dir_fd)
    if fd is None:
        return b""
    try:
        chunks, size = [], 0
        while size < limit and (chunk := os.read(fd, min(READ_CHUNK, limit - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _write_at(dir_fd: int, name: str, data: bytes) -> None:
    fd = os.open(name, WRITE_FLAGS, 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _clear_entry(dir_fd: int, name: str) -> None:
    """Move whatever the command left at ``name`` out of the way (never following it)."""
    with suppress(FileNotFoundError):
        os.rename(name, f".stale-{name}-{secrets.token_hex(4)}", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _fresh_dir(parent_fd: int, name: str) -> int:
    """A new directory the run container can write in (its uid may differ from the relay's)."""
    _clear_entry(parent_fd, name)
    os.mkdir(name, 0o700, dir_fd=parent_fd)
    fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    os.fchmod(fd, 0o777)
    return fd


def _remove_dir(parent_fd: int, name: str) -> None:
    """Best effort: the step's files go; a tree the command planted there stays until the pod goes."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    except OSError:
        return
    try:
        for entry in os.listdir(fd):
            with suppress(OSError):
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    with suppress(OSError):
        os.rmdir(name, dir_fd=parent_fd)


def _stop(steps_fd: int) -> None:
    with suppress(FileExistsError):
        _write_at(steps_fd, STOP_FILE, b"")


class Relay:
    def __init__(
        self, plan: dict[str, Any], store: Store, io_dir: Path, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        session = plan["session"]
        self.channel, self.idle_s = str(session["channel"]), float(session["idleSeconds"])
        self.output_bytes = int(plan["outputBytes"])
        self.store, self.io_dir, self.clock = store, io_dir, clock

    def serve(self) -> str:
        """Relay steps until ``stop``, the idle limit, or the run container's end; returns which.
        A store that cannot be reached is waited for (the idle limit still applies)."""
        io_fd = os.open(self.io_dir, DIR_FLAGS)
        steps_fd = _fresh_dir(io_fd, STEPS_DIR)
        try:
            step, last, pause, stop_checked = 1, self.clock(), 0.01, 0.0
            while True:
                if self._run_ended():
                    return "ended"
                now = self.clock()
                if now - last >= self.idle_s:
                    _stop(steps_fd)
                    return "idle"
                try:
                    if now - stop_checked >= 1.0:
                        stop_checked = now
                        if self.store.exists(steps.stop_key(self.channel)):
                            _stop(steps_fd)
                            return "stopped"
                    body = get_json(self.store, steps.request_key(self.channel, step))
                except ArtifactNotFound:
                    time.sleep(pause)
                    pause = min(0.25, pause * 1.5)
                    continue
                except StoreError as exc:
                    log.warning("the store cannot be reached (%s); trying again", exc)
                    time.sleep(1.0)
                    continue
                reply = self.step(steps_fd, step, body)
                self._send(step, reply)
                step, last, pause = step + 1, self.clock(), 0.01
        finally:
            os.close(steps_fd)
            os.close(io_fd)

    def _send(self, step: int, reply: steps.StepReply) -> None:
        for attempt in range(30):
            try:
                put_json(self.store, steps.reply_key(self.channel, step), reply.body())
                return
            except StoreError as exc:
                log.warning("could not store the reply to step %d (%s); trying again", step, exc)
                time.sleep(min(5.0, 0.2 * 2**attempt))
        raise StoreError(f"the reply to step {step} could not be stored")

    def step(self, steps_fd: int, step: int, body: Any) -> steps.StepReply:
        try:
            request = steps.StepRequest.model_validate(body)
            stdin = request.stdin() or b""
        except (ValidationError, ValueError) as exc:
            return steps.StepReply(outcome="error", message=f"malformed request: {exc}"[:1000])
        began = self.clock()
        name = str(step)
        step_fd = _fresh_dir(steps_fd, name)
        try:
            try:
                _write_at(step_fd, "command", request.command.encode())
                _write_at(step_fd, "stdin", stdin)
                _write_at(step_fd, "timeout", str(max(1, math.ceil(request.timeout_s))).encode())
                _write_at(step_fd, "ready", b"")
            except OSError as exc:  # the command planted files where the step's go
                return steps.StepReply(outcome="error", message=f"the step could not be handed over: {exc}")
            finished = self._await_done(step_fd, began + request.timeout_s + 10)
            if not finished:
                return steps.StepReply(outcome="error", message="the session's shell stopped answering",
                                       duration_s=self.clock() - began)  # fmt: skip
            timed_out = read_at(step_fd, "outcome", 16).strip() == b"timeout"
            code = read_at(step_fd, "code", 16).decode(errors="replace").strip()
            stdout = read_at(step_fd, "stdout", self.output_bytes + 1)
            stderr = read_at(step_fd, "stderr", self.output_bytes + 1)
        finally:
            os.close(step_fd)
            _remove_dir(steps_fd, name)
        cut = len(stdout) > self.output_bytes or len(stderr) > self.output_bytes
        return steps.StepReply(
            outcome="timeout" if timed_out else "ok",
            exit_code=int(code) if code.lstrip("-").isdigit() and not timed_out else None,
            stdout=stdout[: self.output_bytes].decode(errors="replace"),
            stderr=stderr[: self.output_bytes].decode(errors="replace"),
            truncated=cut, duration_s=round(self.clock() - began, 3),
        )  # fmt: skip

    def _await_done(self, step_fd: int, deadline: float) -> bool:
        pause = 0.005
        while self.clock() < deadline:
            fd = _open_file("done", step_fd)
            if fd is not None:
                os.close(fd)
                return True
            if self._run_ended():
                return False
            time.sleep(pause)
            pause = min(0.1, pause * 1.5)
        return False

    def _run_ended(self) -> bool:
        """The run container's wrapper wrote its exit code: the loop is gone (stopped or timed out)."""
        try:
            return os.stat(self.io_dir / Path(EXIT_CODE_FILE).name, follow_symlinks=False).st_size > 0
        except OSError:
            return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="skillgym_operator.session")
    parser.add_argument("--io-dir", default=IO_DIR)
    args = parser.parse_args(argv)
    plan = json.loads(os.environ[PLAN_ENV])
    ended = Relay(plan, make_store(CommonSettings()), Path(args.io_dir)).serve()
    print(json.dumps({"session": ended}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
