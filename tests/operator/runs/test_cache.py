"""The operator's view of SandboxRuns: the newest copy wins, and the quota counts what it knows."""

from __future__ import annotations

import threading
from typing import Any

from skillgym_operator.runs.cache import RunCache, is_newer


def run(name: str, version: str, phase: str | None = None, uid: str = "u-1", **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": version,
                     "creationTimestamp": f"2026-01-01T00:00:{version.zfill(2)}Z"},
        "status": {"phase": phase, **status} if phase else {},
    }  # fmt: skip


def test_an_older_copy_never_replaces_a_newer_one() -> None:
    cache = RunCache()
    cache.observe(run("a", "12", "Running", attempt=1))
    assert cache.observe(run("a", "11", "Pending", attempt=1))["status"]["phase"] == "Running"
    assert cache.get("ns", "a")["status"]["phase"] == "Running"  # type: ignore[index]
    assert cache.observe(run("a", "13", "Succeeded"))["status"]["phase"] == "Succeeded"


def test_a_recreated_run_of_the_same_name_is_new_whatever_its_version() -> None:
    assert is_newer(run("a", "5", uid="u-2"), run("a", "9"))
    assert not is_newer(run("a", "5"), run("a", "9"))
    assert is_newer(run("a", "opaque"), run("a", "9"))


def test_the_quota_counts_active_and_reserved_runs() -> None:
    cache = RunCache()
    cache.observe(run("a", "1", "Running", attempt=1))
    cache.observe(run("b", "2", "Succeeded"))
    assert cache.reserve("ns", "c", limit=2) is None
    assert cache.reserve("ns", "c", limit=2) is None  # already counted
    assert cache.reserve("ns", "d", limit=2) == 2
    cache.release("ns", "c")
    assert cache.reserve("ns", "d", limit=2) is None
    cache.observe(run("a", "3", "Failed"))
    assert cache.reserve("ns", "e", limit=2) is None
    assert cache.reserve("other", "x", limit=1) is None  # namespaces are counted apart


def test_a_forgotten_run_frees_its_slot() -> None:
    cache = RunCache()
    cache.observe(run("a", "1", "Pending", attempt=1))
    assert cache.reserve("ns", "b", limit=1) == 1
    assert cache.forget("ns", "a") is not None
    assert cache.reserve("ns", "b", limit=1) is None


def test_reservations_from_many_threads_never_exceed_the_limit() -> None:
    cache = RunCache()
    granted: list[str] = []
    lock = threading.Lock()

    def claim(index: int) -> None:
        if cache.reserve("ns", f"r{index}", limit=7) is None:
            with lock:
                granted.append(f"r{index}")

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 7


def test_chores_are_the_runs_waiting_for_a_start_a_build_a_retry_or_a_removal_oldest_first() -> None:
    cache = RunCache()
    cache.observe(run("late", "9", "Queued"))
    cache.observe(run("early", "2", "Retrying", attempt=1))
    cache.observe(run("busy", "3", "Running", attempt=1))
    cache.observe(run("built", "4", "Building"))
    cache.observe(run("done", "5", "Succeeded", podDeleted=True))
    cache.observe(run("finished", "6", "Failed"))
    assert [r["metadata"]["name"] for r in cache.chores()] == ["early", "built", "finished", "late"]
    cache.observe(run("early", "10", "Pending", attempt=2))
    assert "early" not in [r["metadata"]["name"] for r in cache.chores()]


def test_a_deleted_run_is_remembered_by_uid_only() -> None:
    cache = RunCache()
    cache.observe(run("a", "1", "Running", attempt=1))
    cache.forget("ns", "a", "u-1")
    assert cache.get("ns", "a") is None
    assert cache.deleted("ns", "a", "u-1")
    assert not cache.deleted("ns", "a", "u-2")  # a new run of the same name
    assert not cache.deleted("ns", "a", "")
