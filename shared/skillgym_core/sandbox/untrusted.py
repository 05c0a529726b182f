#!/usr/bin/env python3
"""run-untrusted: run agent-written code from inside a trusted verifier (standard library only).

A verifier that executes the agent's code (its tests, its script, ``git`` on its repository
with the repository's own config) gives that code the verifier's rights, including writing
``/logs/verifier``. This runner takes them away first. The command runs

* under a Landlock domain that may read and execute everything but ``/tests``, ``/logs`` and
  ``/solution``, and write only below the ``--writable`` directories (default: the working
  directory and ``/tmp``); signals and abstract sockets are scoped to the domain where the
  kernel supports it;
* with ``no_new_privs``, no inherited descriptors but stdin/stdout/stderr, in its own session;
* under a wall-clock limit; when the command ends, every process it left behind (also those
  that daemonised: this runner is their subreaper) is killed before the runner exits.

Usage: ``run-untrusted [--timeout S] [--writable DIR]... [--deny DIR]... -- COMMAND [ARG]...``
Exit status: the command's, 124 on timeout, 125 when the runner cannot confine it (Landlock
missing): the command is then not run at all."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36

FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_WRITE_ONLY = sum(1 << bit for bit in range(4, 13))  # remove, make_* (ABI 1)
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
DEFAULT_DENIED = ("/tests", "/logs", "/solution")
ALWAYS_WRITABLE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/shm")
CONFINEMENT_FAILED = 125
TIMED_OUT = 124


class RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when Landlock is unavailable)."""
    version = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, int(version))


def _handled(abi: int) -> tuple[int, int]:
    write = FS_WRITE_FILE | FS_WRITE_ONLY | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0)
    write |= FS_IOCTL_DEV if abi >= 5 else 0
    return FS_EXECUTE | FS_READ_FILE | FS_READ_DIR, write


def _allow(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            access &= FS_EXECUTE | FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV
        rule = PathBeneathAttr(access, fd)
        if _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def confine(writable: list[str], denied: list[str]) -> None:
    """Restrict the calling process (and every later child) as the module docstring says."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is not available on this kernel")
    read, write = _handled(abi)
    attr = RulesetAttr(read | write, 0, (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0)
    size = ctypes.sizeof(RulesetAttr) if abi >= 6 else 16
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        hidden = {os.path.normpath(d) for d in denied}
        for entry in sorted(os.listdir("/")):
            path = "/" + entry
            if path not in hidden and not any(h.startswith(path + "/") for h in hidden):
                _allow(ruleset, path, read)
        for path in [*writable, *ALWAYS_WRITABLE]:
            if os.path.normpath(path) not in hidden:
                _allow(ruleset, path, read | write)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _descendants() -> list[int]:
    """Every process below this one (children, their children, ...)."""
    found: list[int] = []
    frontier = [os.getpid()]
    while frontier:
        pid = frontier.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    children = [int(c) for c in handle.read().split()]
            except OSError:
                continue
            found += children
            frontier += children
    return found


def kill_leftovers(deadline_s: float = 5.0) -> None:
    """SIGKILL every descendant and reap them (this process is their subreaper)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        alive = _descendants()
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            if not alive:
                return
        if not alive:
            return
        time.sleep(0.01)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run-untrusted", description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--writable", action="append", default=None)
    parser.add_argument("--deny", action="append", default=list(DEFAULT_DENIED))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a command is required")
    writable = args.writable if args.writable is not None else [os.getcwd(), "/tmp"]
    if landlock_abi() < 1:
        print("run-untrusted: Landlock is not available; refusing to run agent code", file=sys.stderr)
        return CONFINEMENT_FAILED
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        child = subprocess.Popen(
            command, preexec_fn=lambda: confine(writable, args.deny), start_new_session=True, close_fds=True
        )
    except subprocess.SubprocessError as exc:
        print(f"run-untrusted: could not confine the command: {exc}", file=sys.stderr)
        return CONFINEMENT_FAILED
    except OSError as exc:
        print(f"run-untrusted: {exc}", file=sys.stderr)
        return 127
    try:
        status = child.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        status = TIMED_OUT
    finally:
        kill_leftovers()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
