"""``skillgym serve``: a service's worker in the background, health, readiness and metrics over HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
import pytest
import uvicorn
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import read_event
from skillgym_core.contracts.events import EnvBuilt, Envelope, Payload
from skillgym_core.store.local import LocalStore

from skillgym.serve import ServeSettings, ServiceRunner, build_app
from tests.skillgym.serve_support import FAST, EchoBuilder, readiness, skill_event, wait_for, wait_for_readiness
from tests.support.faults import FaultyStore
from tests.support.services import free_port

Served = tuple[str, MemoryBus, ServiceRunner]


@pytest.fixture
def serve_runner() -> Iterator[Callable[[ServiceRunner], str]]:
    """Starts a runner's worker and its HTTP app; returns the app's base URL."""
    started: list[tuple[ServiceRunner, uvicorn.Server, threading.Thread]] = []

    def start(runner: ServiceRunner) -> str:
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(build_app(runner), host="127.0.0.1", port=port, log_level="error"))
        web = threading.Thread(target=server.run, daemon=True)
        runner.thread.start()
        web.start()
        started.append((runner, server, web))
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                httpx.get(base + "/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        return base

    yield start
    for runner, server, web in started:
        runner.stop.set()
        server.should_exit = True
        runner.thread.join(5)
        web.join(5)


@pytest.fixture
def served(tmp_path: Path, serve_runner: Callable[[ServiceRunner], str]) -> Served:
    bus = MemoryBus()
    runner = ServiceRunner(EchoBuilder(), bus, LocalStore(tmp_path / "store"), FAST)
    return serve_runner(runner), bus, runner


def test_health_readiness_and_metrics_over_http(served: Served) -> None:
    base, bus, _ = served
    assert httpx.get(base + "/healthz").status_code == 200
    body = wait_for_readiness(base, 200)
    assert body["service"] == "echo"
    assert body["error"] is None
    assert {name: state["up"] for name, state in body["dependencies"].items()} == {"broker": True, "store": True}
    assert body["stalled"] == []

    event = skill_event()
    bus.publish(event.type, event.key, event.to_bytes())
    deadline = time.monotonic() + 10
    while not bus.records(topics.ENV_BUILT) and time.monotonic() < deadline:
        time.sleep(0.05)
    built = [read_event(r) for r in bus.records(topics.ENV_BUILT)]
    assert [e.payload_as(EnvBuilt).task_id for e in built] == ["task-skill-1"]
    assert built[0].correlation_id == "c"

    text = httpx.get(base + "/metrics").text
    assert 'skillgym_events_consumed_total{service="echo",topic="skill-ingested"}' in text
    assert 'skillgym_dependency_up{dependency="store",service="echo"} 1.0' in text
    assert 'skillgym_consumer_stalled_partitions{service="echo",topic="skill-ingested"} 0.0' in text


def test_readiness_fails_when_the_worker_dies(served: Served) -> None:
    base, _, runner = served
    runner.stop.set()
    runner.thread.join(5)
    assert httpx.get(base + "/readyz").status_code == 503


def test_readiness_fails_while_the_store_is_down_and_recovers_with_it(
    tmp_path: Path, serve_runner: Callable[[ServiceRunner], str]
) -> None:
    bus = MemoryBus()
    store = FaultyStore(LocalStore(tmp_path / "store"))
    base = serve_runner(ServiceRunner(EchoBuilder(), bus, store, FAST))
    wait_for_readiness(base, 200)

    store.down = True  # idle: the probe finds out
    body = wait_for_readiness(base, 503)
    assert body["dependencies"]["store"]["up"] is False
    assert body["dependencies"]["broker"]["up"] is True
    assert "store unreachable" in body["error"]
    assert "StoreUnavailable" in body["last_error"]["message"]
    assert 'skillgym_dependency_up{dependency="store",service="echo"} 0.0' in httpx.get(base + "/metrics").text

    event = skill_event()  # a record arriving during the outage waits for the store
    bus.publish(event.type, event.key, event.to_bytes())
    wait_for(lambda: readiness(base)[1]["interruptions"] >= 2)
    assert readiness(base)[0] == 503
    assert bus.records(topics.ENV_BUILT) == []

    store.down = False
    body = wait_for_readiness(base, 200)
    assert body["dependencies"]["store"]["up"] is True
    assert body["error"] is None
    assert body["last_error"]["dependency"] == "store"
    wait_for(lambda: bus.records(topics.ENV_BUILT))
    assert len(bus.records(topics.ENV_BUILT)) == 1
    assert body["dead_lettered"] == 0
    assert bus.pending("skillgym-echo", [topics.SKILL_INGESTED]) == 0


class BlockingBuilder(EchoBuilder):
    """Holds its first event until released: a consumer that makes no progress."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def handle(self, event: Envelope) -> Sequence[Payload]:
        self.release.wait(10)
        return super().handle(event)


def test_readiness_fails_while_records_wait_and_none_is_settled(
    tmp_path: Path, serve_runner: Callable[[ServiceRunner], str]
) -> None:
    bus = MemoryBus()
    service = BlockingBuilder()
    settings = FAST.model_copy(update={"stall_after_s": 0.3})
    base = serve_runner(ServiceRunner(service, bus, LocalStore(tmp_path / "store"), settings))
    wait_for_readiness(base, 200)
    for i in range(3):
        event = skill_event(f"skill-{i}")
        bus.publish(event.type, event.key, event.to_bytes())

    body = wait_for_readiness(base, 503)
    [stall] = body["stalled"]
    assert (stall["topic"], stall["partition"]) == (topics.SKILL_INGESTED, 0)
    assert stall["backlog"] >= 1 and stall["seconds_without_progress"] >= 0.3
    assert "stalled" in body["error"]
    assert all(state["up"] for state in body["dependencies"].values())
    text = httpx.get(base + "/metrics").text
    assert 'skillgym_consumer_stalled_partitions{service="echo",topic="skill-ingested"} 1.0' in text

    service.release.set()
    wait_for(lambda: len(bus.records(topics.ENV_BUILT)) == 3)
    body = wait_for_readiness(base, 200)
    assert body["stalled"] == []


def test_a_runner_not_started_is_not_ready(tmp_path: Path) -> None:
    runner = ServiceRunner(EchoBuilder(), MemoryBus(), LocalStore(tmp_path / "store"), ServeSettings())
    assert runner.status()["ready"] is False  # not started: no worker, no subscription
    assert runner.status()["error"] == "worker stopped"
