"""Cleanup that callers should not wait for: removing a sandbox's scratch directories and
cgroups. Right after a run the kernel may still be tearing down the sandbox's mount
namespace and cgroups, which makes ``rmdir`` slow; one daemon thread does it instead, and
whatever is still queued at interpreter exit is done then."""

from __future__ import annotations

import atexit
import contextlib
import queue
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

_jobs: queue.Queue[Callable[[], object]] | None = None
_lock = threading.Lock()


def _work(jobs: queue.Queue[Callable[[], object]]) -> None:
    while True:
        job = jobs.get()
        with contextlib.suppress(Exception):
            job()
        jobs.task_done()


def _drain(jobs: queue.Queue[Callable[[], object]]) -> None:
    while True:
        try:
            job = jobs.get_nowait()
        except queue.Empty:
            return
        with contextlib.suppress(Exception):
            job()


def later(job: Callable[[], object]) -> None:
    """Run ``job`` on the cleanup thread."""
    global _jobs
    with _lock:
        if _jobs is None:
            _jobs = queue.Queue()
            threading.Thread(target=_work, args=(_jobs,), name="sandbox-janitor", daemon=True).start()
            atexit.register(_drain, _jobs)
        jobs = _jobs
    jobs.put(job)


def wait_idle() -> None:
    """Block until every queued cleanup has run (tests and benchmarks use it)."""
    if _jobs is not None:
        _jobs.join()


def discard_tree(path: Path) -> None:
    """Delete a directory tree in the background."""
    later(lambda: shutil.rmtree(path, ignore_errors=True))
