"""``skillgym serve``: a service's worker in the background, health, readiness and metrics over HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest
import uvicorn
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import EnvBuilt, Envelope, Payload, SkillIngested
from skillgym_core.store.local import LocalStore

from skillgym.serve import ServeSettings, ServiceRunner, build_app
from tests.support.services import free_port


class EchoBuilder:
    name = "echo"
    consumes = (topics.SKILL_INGESTED,)

    def handle(self, event: Envelope) -> Sequence[Payload]:
        skill = event.payload_as(SkillIngested)
        return [EnvBuilt(task_id=f"task-{skill.skill_id}", skill_id=skill.skill_id, package_key="k", template="t")]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, MemoryBus, ServiceRunner]]:
    bus = MemoryBus()
    settings = ServeSettings(poll_timeout_s=0.05)
    runner = ServiceRunner(EchoBuilder(), bus, LocalStore(tmp_path / "store"), settings)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(build_app(runner), host="127.0.0.1", port=port, log_level="error"))
    web = threading.Thread(target=server.run, daemon=True)
    runner.thread.start()
    web.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/healthz", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    yield base, bus, runner
    runner.stop.set()
    server.should_exit = True
    runner.thread.join(5)
    web.join(5)


def test_health_readiness_and_metrics_over_http(served: tuple[str, MemoryBus, ServiceRunner]) -> None:
    base, bus, _ = served
    assert httpx.get(base + "/healthz").status_code == 200
    ready = httpx.get(base + "/readyz")
    assert ready.status_code == 200
    assert ready.json()["service"] == "echo"

    event = Envelope.wrap(
        SkillIngested(skill_id="skill-1", name="s", record_key="r", files_key="f"), producer="test", correlation_id="c"
    )
    bus.publish(event.type, event.key, event.to_bytes())
    deadline = time.monotonic() + 10
    while not bus.records(topics.ENV_BUILT) and time.monotonic() < deadline:
        time.sleep(0.05)
    built = [Envelope.from_bytes(r.value) for r in bus.records(topics.ENV_BUILT)]
    assert [e.payload_as(EnvBuilt).task_id for e in built] == ["task-skill-1"]
    assert built[0].correlation_id == "c"

    text = httpx.get(base + "/metrics").text
    assert 'skillgym_events_consumed_total{service="echo",topic="skill-ingested"}' in text


def test_readiness_fails_when_the_worker_dies(served: tuple[str, MemoryBus, ServiceRunner]) -> None:
    base, _, runner = served
    runner.stop.set()
    runner.thread.join(5)
    assert httpx.get(base + "/readyz").status_code == 503
