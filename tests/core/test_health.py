"""Dependency health and partition progress as a running consumer tracks them."""

from __future__ import annotations

from prometheus_client import REGISTRY
from skillgym_core.errors import StoreUnavailable
from skillgym_core.health import DependencyHealth, ProgressTracker


def up(service: str, dependency: str) -> float | None:
    return REGISTRY.get_sample_value("skillgym_dependency_up", {"service": service, "dependency": dependency})


def test_a_dependency_is_down_from_its_first_failure_until_it_answers() -> None:
    health = DependencyHealth("health-test")
    assert health.down() == []
    assert up("health-test", "store") == 1 and up("health-test", "broker") == 1

    health.failed("store", StoreUnavailable("connection refused"))
    first = health.snapshot()["store"]
    health.failed("store", StoreUnavailable("still refused"))

    assert health.down() == ["store"]
    assert up("health-test", "store") == 0
    state = health.snapshot()["store"]
    assert state["up"] is False
    assert state["last_error"] == "StoreUnavailable: still refused"
    assert state["down_since"] == first["down_since"]

    health.answered("store")
    assert health.down() == []
    assert up("health-test", "store") == 1
    assert health.snapshot()["store"]["last_error"] == "StoreUnavailable: still refused"
    assert health.snapshot()["store"]["down_since"] is None


def test_all_answered_restores_every_dependency_including_those_a_handler_named() -> None:
    health = DependencyHealth("health-test-2")
    health.failed("baseline", RuntimeError("endpoint down"))
    health.failed("broker", RuntimeError("down"))
    assert health.down() == ["baseline", "broker"]
    health.all_answered()
    assert health.down() == []


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_partition_is_stalled_when_records_wait_without_any_settling() -> None:
    clock = Clock()
    tracker = ProgressTracker(stall_after_s=60, clock=clock)
    tracker.observe({("t", 0): 3, ("t", 1): 0})
    clock.now += 59
    assert tracker.stalled() == []
    clock.now += 2
    [stall] = tracker.stalled()
    assert (stall.topic, stall.partition, stall.backlog, stall.seconds_without_progress) == ("t", 0, 3, 61.0)
    assert tracker.stalled_count("t") == 1 and tracker.stalled_count("other") == 0


def test_settling_a_record_restarts_the_clock_and_an_empty_backlog_clears_it() -> None:
    clock = Clock()
    tracker = ProgressTracker(stall_after_s=60, clock=clock)
    tracker.observe({("t", 0): 5})
    clock.now += 50
    tracker.settled(("t", 0))
    clock.now += 50
    tracker.observe({("t", 0): 4})
    assert tracker.stalled() == []
    clock.now += 11
    assert [s.partition for s in tracker.stalled()] == [0]

    tracker.observe({("t", 0): 0})
    assert tracker.stalled() == []
    clock.now += 100
    assert tracker.stalled() == []


def test_partitions_no_longer_owned_are_forgotten() -> None:
    clock = Clock()
    tracker = ProgressTracker(stall_after_s=10, clock=clock)
    tracker.observe({("t", 0): 5, ("t", 1): 5})
    clock.now += 20
    tracker.observe({("t", 1): 5})
    assert [(s.topic, s.partition) for s in tracker.stalled()] == [("t", 1)]


def test_records_handed_to_the_worker_wait_until_settled() -> None:
    clock = Clock()
    tracker = ProgressTracker(stall_after_s=10, clock=clock)
    tracker.observe({("t", 0): 0})  # idle when last measured
    tracker.polled({("t", 0): 2})  # then a batch came, and its handler hangs
    clock.now += 11
    assert [(s.partition, s.backlog) for s in tracker.stalled()] == [(0, 2)]
