"""Directories that belong to one process and are swept once it is gone.

A process killed with ``SIGKILL`` leaves behind what it would have cleaned up: staging
directories with bind mounts, workspaces with a tmpfs mounted on them, unpacked task copies.
Naming such a directory after the process's pid alone is not enough: pids are reused, and a
new process that happens to get a dead one's pid would walk into its leftovers (``File
exists`` on every run). A directory is therefore tagged with the pid *and* the process's start
time (``/proc/<pid>/stat``, clock ticks since boot), which together name one process for the
life of the machine, and a tagged directory is stale once no process with that tag exists.
One that is empty when its process exits is removed then; what still holds something (a mount
a killed run left) is the next process's to sweep."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from functools import lru_cache
from pathlib import Path

from skillgym_core.sandbox.janitor import remove_tree

_lock = threading.Lock()
_swept: set[tuple[str, str]] = set()
_made: set[tuple[int, Path]] = set()  # (pid of the process that made it, directory)


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name in parentheses may itself hold spaces or parentheses
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


@lru_cache(maxsize=4)
def _tag_of(pid: int) -> str:
    return f"{pid}-{_start_time(pid) or '0'}"


def process_tag() -> str:
    """``<pid>-<start time>`` of this process (a forked child gets its own)."""
    return _tag_of(os.getpid())


def owner_is_gone(tag: str) -> bool:
    """Whether the process a directory's tag names no longer exists. A bare ``<pid>`` (the
    form before start times were recorded) is gone when that pid is not running or is this
    process (which never makes bare-pid directories, so such a one was left by a dead
    process whose pid came back)."""
    pid_text, _, started = tag.partition("-")
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if not started:
        return pid == os.getpid() or not Path(f"/proc/{pid}").exists()
    return _start_time(pid) != started


def sweep(parent: Path, prefix: str) -> list[Path]:
    """Remove every ``parent/<prefix><tag>`` whose owner is gone (mounts inside detached first);
    returns what was removed."""
    removed: list[Path] = []
    try:
        candidates = list(parent.glob(f"{prefix}*"))
    except OSError:
        return removed
    for candidate in candidates:
        tag = candidate.name[len(prefix) :]
        if owner_is_gone(tag) and remove_tree(candidate):
            removed.append(candidate)
    return removed


def owned_dir(parent: Path, prefix: str, *, mode: int = 0o700) -> Path:
    """``parent/<prefix><tag>`` for this process, created on first use; the first call per
    parent and prefix also sweeps what dead processes left there."""
    key = (str(parent), prefix)
    path = parent / f"{prefix}{process_tag()}"
    with _lock:
        if key not in _swept:
            parent.mkdir(parents=True, exist_ok=True)
            sweep(parent, prefix)
            _swept.add(key)
        elif path.is_dir():  # made before by this process: nothing to do on every later call
            return path
        path.mkdir(mode=mode, exist_ok=True)
        _made.add((os.getpid(), path))
    os.chmod(path, mode)
    return path


def _remove_empty_own() -> None:
    """This process's directories that are empty by now; a forked child that exits this way
    leaves its parent's alone. ``rmdir`` removes only an empty directory and never follows a
    link."""
    pid = os.getpid()
    for owner, path in list(_made):
        if owner == pid:
            with contextlib.suppress(OSError):
                path.rmdir()


# registered on import, before the janitor's and the staging mounts' own exit handlers (made on
# first use): those run first, and what they clear out is empty by the time this one runs
atexit.register(_remove_empty_own)
