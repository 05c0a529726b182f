"""Judges many workspaces with the built-in checker in one sandbox, each exactly as ``test.sh``
would: the workspace laid out at /app, /logs/verifier emptied, ``/tests/verify.py`` run from
/app as the main module, a zero reward written when it left none, the exit status kept.

The checker's imports are loaded once; each workspace is judged in a fresh fork of this process,
so no state of one judgement reaches the next. Between workspaces /app, /logs/verifier, /tmp and
/dev/shm are emptied. Standard library only: it runs on the task's own Python.

Usage: driver.py BULK_DIR COUNT TIMEOUT_S. BULK_DIR/<i>/app holds workspace i on entry and what
the checker left of it on exit; BULK_DIR/<i>/logs gets its /logs/verifier, stdout, stderr and
status.json ({"exit": int, "timed_out": bool, "seconds": float})."""

import ast
import contextlib
import importlib
import json
import os
import runpy
import shutil
import signal
import sys
import time

APP, LOGS, TESTS = "/app", "/logs/verifier", "/tests"
SCRATCH = ("/tmp", "/dev/shm")
SIGNAL_EXIT_BASE = 128


def local_modules():
    return {name[:-3] for name in os.listdir(TESTS) if name.endswith(".py")} | {
        name for name in os.listdir(TESTS) if os.path.isdir(os.path.join(TESTS, name))}


def preload():
    """Import what the checker's files import from outside the test folder (the standard library,
    third-party packages), and the shared rubric runner, whose import reads no workspace."""
    local = local_modules()
    wanted = set()
    for name in os.listdir(TESTS):
        if not name.endswith(".py"):
            continue
        try:
            with open(os.path.join(TESTS, name), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                wanted |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                wanted.add(node.module.split(".")[0])
    for module in sorted(wanted - local):
        with contextlib.suppress(Exception):
            importlib.import_module(module)
    if "checks" in local:
        sys.path.insert(0, TESTS)
        try:
            importlib.import_module("checks")
        finally:
            sys.path.remove(TESTS)


def empty(directory):
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)


def copy_into(source, target):
    for name in os.listdir(source):
        path = os.path.join(source, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.copytree(path, os.path.join(target, name), symlinks=True)
        else:
            shutil.copy2(path, os.path.join(target, name), follow_symlinks=False)


def judge(stdout, stderr):
    """The forked child: ``cd /app; python3 /tests/verify.py``."""
    os.setpgid(0, 0)
    for fd, path in ((1, stdout), (2, stderr)):
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(handle, fd)
        os.close(handle)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.argv = [os.path.join(TESTS, "verify.py")]
    code = 0
    try:
        with contextlib.suppress(OSError):
            os.chdir(APP)
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException:  # an uncaught error, as the interpreter would report it
        import traceback

        traceback.print_exc()
        code = 1
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code & 0xFF)


def wait(pid, timeout_s):
    """(exit status as bash reports it, timed out)."""
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return (SIGNAL_EXIT_BASE + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)), False
        if time.monotonic() > deadline:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return SIGNAL_EXIT_BASE + signal.SIGKILL, True
        time.sleep(0.002)


def reap_strays():
    """Whatever a judgement left running (the checker ends the run's other processes before its
    verdict, but a crashed one may not have) is ended before the next workspace is laid out."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (me, 1, os.getppid()):
            with contextlib.suppress(OSError):
                os.kill(int(name), signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def judge_one(item_dir, timeout_s):
    logs = os.path.join(item_dir, "logs")
    for directory in (APP, LOGS, *SCRATCH):
        empty(directory)
    os.makedirs(LOGS, exist_ok=True)
    copy_into(os.path.join(item_dir, "app"), APP)
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        judge(os.path.join(logs, "stdout"), os.path.join(logs, "stderr"))
    status, timed_out = wait(pid, timeout_s)
    reap_strays()
    seconds = time.monotonic() - started
    if not any(os.path.isfile(p) and os.path.getsize(p) for p in (f"{LOGS}/reward.json", f"{LOGS}/reward.txt")):
        with contextlib.suppress(OSError):
            os.unlink(f"{LOGS}/reward.txt")
        with open(f"{LOGS}/reward.txt", "w", encoding="utf-8") as handle:
            handle.write("0\n")
    shutil.rmtree(os.path.join(item_dir, "app"), ignore_errors=True)
    shutil.copytree(APP, os.path.join(item_dir, "app"), symlinks=True)
    shutil.copytree(LOGS, os.path.join(logs, "verifier"), symlinks=True)
    with open(os.path.join(logs, "status.json"), "w", encoding="utf-8") as handle:
        json.dump({"exit": status, "timed_out": timed_out, "seconds": round(seconds, 3)}, handle)


def main():
    bulk, count, timeout_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    preload()
    for index in range(count):
        judge_one(os.path.join(bulk, str(index)), timeout_s)


if __name__ == "__main__":
    main()
