"""Leader election decisions as pure functions of the Lease as read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from skillgym_operator.leader import LeaderElector, decide, lease_namespace, micro_time, next_lease

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def lease(holder: str, renewed_ago_s: float, duration_s: int = 15, transitions: int = 0) -> dict[str, Any]:
    stamp = micro_time(NOW - timedelta(seconds=renewed_ago_s))
    return {"metadata": {"name": "op", "resourceVersion": "7"},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration_s, "acquireTime": stamp,
                     "renewTime": stamp, "leaseTransitions": transitions}}  # fmt: skip


def test_no_lease_is_created_and_an_own_lease_renewed() -> None:
    assert decide(None, "a", NOW) == "create"
    assert decide(lease("a", 100), "a", NOW) == "renew"


def test_a_live_lease_of_another_is_waited_for_and_an_expired_one_taken_over() -> None:
    assert decide(lease("b", 14.9), "a", NOW) == "wait"
    assert decide(lease("b", 15.0), "a", NOW) == "take_over"
    assert decide(lease("", 1), "a", NOW) == "take_over"


def test_taking_over_counts_a_transition_and_keeps_the_resource_version() -> None:
    body = next_lease(lease("b", 60, transitions=2), "take_over", "a", 15, NOW, "op")
    assert body["spec"]["holderIdentity"] == "a" and body["spec"]["leaseTransitions"] == 3
    assert body["metadata"]["resourceVersion"] == "7"  # the write fails if someone else wrote since
    renewed = next_lease(lease("a", 3, transitions=3), "renew", "a", 15, NOW, "op")
    assert renewed["spec"]["renewTime"] == micro_time(NOW) and renewed["spec"]["acquireTime"] != micro_time(NOW)
    assert next_lease(None, "create", "a", 15, NOW, "op")["spec"]["leaseTransitions"] == 0


class FakeLeaseStore:
    """A Lease with optimistic concurrency: a write must carry the version it read."""

    def __init__(self) -> None:
        self.body: dict[str, Any] | None = None
        self.version = 0
        self.name = "op"

    def read(self) -> dict[str, Any] | None:
        return None if self.body is None else {**self.body, "metadata": {"name": "op", "resourceVersion": str(self.version)}}

    def write(self, action: str, body: dict[str, Any]) -> bool:
        if action == "create" and self.body is not None:
            return False
        if action != "create" and body["metadata"].get("resourceVersion") != str(self.version):
            return False
        self.body, self.version = body, self.version + 1
        return True


def test_two_candidates_never_both_hold_the_lease() -> None:
    store = FakeLeaseStore()
    clock = [NOW]
    electors = [LeaderElector(store, name, 15, 5, on_lost=lambda: None, clock=lambda: clock[0])  # type: ignore[arg-type]
                for name in ("a", "b")]
    assert [e.try_once() for e in electors] == [True, False]
    clock[0] = NOW + timedelta(seconds=10)
    assert [e.try_once() for e in electors] == [True, False]  # a renews in time
    clock[0] = NOW + timedelta(seconds=40)  # a stopped renewing
    assert electors[1].try_once() is True
    assert electors[0].try_once() is False


def test_the_lease_namespace_defaults_to_the_pods_own(tmp_path: Path) -> None:
    (tmp_path / "namespace").write_text("skillgym\n")
    assert lease_namespace("", str(tmp_path / "namespace")) == "skillgym"
    assert lease_namespace("other", str(tmp_path / "namespace")) == "other"
    assert lease_namespace("", str(tmp_path / "missing")) == "default"


def test_a_standby_answers_the_liveness_probe_until_it_leads() -> None:
    import urllib.request

    from skillgym_operator.leader import StandbyHealth

    from tests.support.services import free_port

    port = free_port()
    health = StandbyHealth(port)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
        assert (response.status, response.read()) == (200, b'{"standby": true}')
    health.close()
    StandbyHealth(port).close()  # the port is free again for the operator's own endpoint


def test_a_leader_that_finds_another_holder_stops() -> None:
    import threading

    store = FakeLeaseStore()
    lost = threading.Event()
    leader = LeaderElector(store, "a", 15, 0.05, on_lost=lost.set)  # type: ignore[arg-type]
    assert leader.try_once()
    leader.keep_renewing()
    assert not lost.wait(0.3)  # renewing keeps it
    store.body = next_lease(None, "create", "b", 15, datetime.now(UTC), "op")  # someone else took it over
    store.version += 1
    assert lost.wait(5)
    leader.stop()


def test_a_holder_with_a_slow_clock_that_keeps_renewing_is_not_taken_over() -> None:
    store = FakeLeaseStore()
    clock = [NOW]
    skewed = [NOW - timedelta(minutes=10)]  # the holder's clock is ten minutes behind
    holder = LeaderElector(store, "a", 15, 5, on_lost=lambda: None, clock=lambda: skewed[0])  # type: ignore[arg-type]
    standby = LeaderElector(store, "b", 15, 5, on_lost=lambda: None, clock=lambda: clock[0])  # type: ignore[arg-type]
    assert holder.try_once()
    for step in range(1, 6):
        clock[0] = NOW + timedelta(seconds=10 * step)
        skewed[0] = NOW - timedelta(minutes=10) + timedelta(seconds=10 * step)
        assert standby.try_once() is False  # by the record's timestamps it looks long expired
        assert holder.try_once()
    # The holder stops renewing: b takes over a lease duration after it saw the last renewal.
    clock[0] += timedelta(seconds=5)
    assert standby.try_once() is False  # sees the last renewal now
    clock[0] += timedelta(seconds=14)
    assert standby.try_once() is False
    clock[0] += timedelta(seconds=2)
    assert standby.try_once() is True
