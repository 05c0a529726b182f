"""The Worker over the in-memory bus and a local store: dedupe, retries with backoff, DLQ."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from skillgym_core.bus.base import Bus
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import from_record, publish_event, read_event, record_mode
from skillgym_core.contracts.events import EnvBuilt, Envelope, Payload, SkillIngested
from skillgym_core.errors import ContractError, SandboxError, TransientError
from skillgym_core.service import Worker
from skillgym_core.store.base import Store, content_key
from skillgym_core.store.local import LocalStore


class PackageBuilder:
    """A small real stage: writes a package derived from the skill and announces it.

    ``failures`` are raised by the first calls, in order, before the handler succeeds."""

    name = "test-builder"

    def __init__(
        self,
        store: Store,
        failures: Sequence[BaseException] = (),
        always_fail: bool = False,
        consumes: tuple[str, ...] = (topics.SKILL_INGESTED,),
    ) -> None:
        self.store = store
        self.consumes = consumes
        self.failures = list(failures)
        self.always_fail = always_fail
        self.call_times: list[float] = []

    def handle(self, event: Envelope) -> Sequence[Payload]:
        self.call_times.append(time.monotonic())
        if self.always_fail:
            raise SandboxError("sandbox crashed", backend="local")
        if self.failures:
            raise self.failures.pop(0)
        skill = event.payload_as(SkillIngested)
        package = f"package of {skill.name} ({skill.skill_id})".encode()
        key = self.store.put_bytes(content_key("packages", package, ".txt"), package)
        return [EnvBuilt(task_id=f"task-{skill.skill_id}", skill_id=skill.skill_id, package_key=key, template="t")]


def skill_event(skill_id: str = "skill-1") -> Envelope:
    payload = SkillIngested(skill_id=skill_id, name=f"name-{skill_id}", record_key="r.json", files_key="f.tar.gz")
    return Envelope.wrap(payload, producer="ingest", correlation_id="corr")


def publish(bus: Bus, event: Envelope, topic: str | None = None) -> None:
    bus.publish(topic or event.type, event.key, event.to_bytes())


def drain(worker: Worker, rounds: int = 5) -> None:
    for _ in range(rounds):
        worker.run_once(timeout_s=0)


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def bus() -> MemoryBus:
    return MemoryBus()


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "store")


def test_handles_and_publishes_then_commits(bus: MemoryBus, store: LocalStore) -> None:
    service = PackageBuilder(store)
    worker = Worker(service, bus, store, group="g")
    event = skill_event()
    publish(bus, event)

    drain(worker)

    outputs = [read_event(d) for d in bus.records(topics.ENV_BUILT)]
    assert len(outputs) == 1
    built = outputs[0].payload_as(EnvBuilt)
    assert store.get_bytes(built.package_key) == b"package of name-skill-1 (skill-1)"
    assert outputs[0].correlation_id == "corr"
    assert outputs[0].producer == "test-builder"
    assert bus.pending("g", service.consumes) == 0
    assert worker.stats.consumed == 1 and worker.stats.produced == 1


def test_a_redelivered_event_runs_once_and_republishes_recorded_outputs(bus: MemoryBus, store: LocalStore) -> None:
    service = PackageBuilder(store)
    worker = Worker(service, bus, store, group="g")
    event = skill_event()
    skipped_before = metric("skillgym_events_duplicate_total", service=service.name, topic=topics.SKILL_INGESTED)
    publish(bus, event)
    publish(bus, event)

    drain(worker)

    assert len(service.call_times) == 1
    assert list(store.list("packages/")) and len(list(store.list("packages/"))) == 1
    outputs = [read_event(d) for d in bus.records(topics.ENV_BUILT)]
    assert len(outputs) == 2
    assert outputs[0] == outputs[1]
    assert worker.stats.duplicates == 1
    assert bus.pending("g", service.consumes) == 0
    skipped_after = metric("skillgym_events_duplicate_total", service=service.name, topic=topics.SKILL_INGESTED)
    assert skipped_after == skipped_before + 1


def test_a_restarted_worker_answers_an_uncommitted_event_from_the_done_marker(
    bus: MemoryBus, store: LocalStore
) -> None:
    service = PackageBuilder(store)
    publish(bus, skill_event())
    crashed = Worker(service, bus, store, group="g")
    delivery = crashed.subscription.poll(timeout_s=0)[0]
    crashed.process(delivery)  # handled and published, then "crashed" before committing
    crashed.close()

    restarted = Worker(service, bus, store, group="g")
    drain(restarted)

    assert len(service.call_times) == 1
    assert restarted.stats.duplicates == 1
    assert len(bus.records(topics.ENV_BUILT)) == 2
    assert bus.pending("g", service.consumes) == 0


def test_poison_goes_to_the_dlq_and_the_batch_goes_on(bus: MemoryBus, store: LocalStore) -> None:
    service = PackageBuilder(store)
    worker = Worker(service, bus, store, group="g")
    bus.publish(topics.SKILL_INGESTED, "bad", b"\x00not an envelope")
    publish(bus, skill_event("skill-2"))

    drain(worker)

    dead = bus.records(topics.dlq(topics.SKILL_INGESTED))
    assert len(dead) == 1
    record = json.loads(dead[0].value)
    assert record["attempts"] == 0
    assert record["error"]["reason"] == "poison"
    assert record["offset"] == 0 and record["key"] == "bad"
    assert base64.b64decode(record["value_b64"]) == b"\x00not an envelope"
    assert len(bus.records(topics.ENV_BUILT)) == 1
    assert service.call_times and len(service.call_times) == 1
    assert bus.pending("g", service.consumes) == 0


def test_a_handler_that_always_fails_is_retried_with_backoff_then_dead_lettered(
    bus: MemoryBus, store: LocalStore
) -> None:
    service = PackageBuilder(store, always_fail=True)
    worker = Worker(service, bus, store, group="g", max_attempts=3, backoff_s=0.05, backoff_max_s=1.0)
    dlq_before = metric("skillgym_events_dlq_total", service=service.name, topic=topics.SKILL_INGESTED)
    event = skill_event()
    publish(bus, event)

    drain(worker)

    assert len(service.call_times) == 3
    gaps = [b - a for a, b in zip(service.call_times, service.call_times[1:], strict=False)]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1
    dead = bus.records(topics.dlq(topics.SKILL_INGESTED))
    assert len(dead) == 1
    record = json.loads(dead[0].value)
    assert record["attempts"] == 3
    assert record["error"]["reason"] == "sandbox"
    assert record["error"]["backend"] == "local"
    assert Envelope.from_bytes(base64.b64decode(record["value_b64"])) == event
    assert bus.records(topics.ENV_BUILT) == []
    assert not store.exists(f"state/{service.name}/done/{event.event_id}.json")
    assert bus.pending("g", service.consumes) == 0
    assert metric("skillgym_events_dlq_total", service=service.name, topic=topics.SKILL_INGESTED) == dlq_before + 1


def test_backoff_is_capped(bus: MemoryBus, store: LocalStore) -> None:
    service = PackageBuilder(store, always_fail=True)
    worker = Worker(service, bus, store, group="g", max_attempts=4, backoff_s=0.05, backoff_max_s=0.06)
    publish(bus, skill_event())

    drain(worker)

    gaps = [b - a for a, b in zip(service.call_times, service.call_times[1:], strict=False)]
    assert len(gaps) == 3
    assert all(0.05 <= gap < 0.5 for gap in gaps)


def test_contract_errors_are_not_retried(bus: MemoryBus, store: LocalStore) -> None:
    service = PackageBuilder(store, failures=[ContractError("bad skill record", field="name")])
    worker = Worker(service, bus, store, group="g", max_attempts=5, backoff_s=0.01)
    publish(bus, skill_event())

    drain(worker)

    assert len(service.call_times) == 1
    record = json.loads(bus.records(topics.dlq(topics.SKILL_INGESTED))[0].value)
    assert record["attempts"] == 1
    assert record["error"]["reason"] == "contract"


def test_transient_failures_then_success(bus: MemoryBus, store: LocalStore) -> None:
    service = PackageBuilder(store, failures=[TransientError("blip"), ValueError("flaky")])
    worker = Worker(service, bus, store, group="g", max_attempts=3, backoff_s=0.01)
    publish(bus, skill_event())

    drain(worker)

    assert len(service.call_times) == 3
    assert bus.records(topics.dlq(topics.SKILL_INGESTED)) == []
    assert len(bus.records(topics.ENV_BUILT)) == 1
    assert worker.stats.dead_lettered == 0
    assert bus.pending("g", service.consumes) == 0


def test_unexpected_exceptions_are_dead_lettered_by_type(bus: MemoryBus, store: LocalStore) -> None:
    service = PackageBuilder(store, failures=[KeyError("x"), KeyError("y")])
    worker = Worker(service, bus, store, group="g", max_attempts=2, backoff_s=0.01)
    publish(bus, skill_event())

    drain(worker)

    record = json.loads(bus.records(topics.dlq(topics.SKILL_INGESTED))[0].value)
    assert record["attempts"] == 2
    assert record["error"]["error"] == "KeyError"


def test_outputs_are_binary_cloudevents_unless_the_setting_asks_for_structured(
    bus: MemoryBus, store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(bus, skill_event())
    drain(Worker(PackageBuilder(store), bus, store, group="g"))
    monkeypatch.setenv("SKILLGYM_EVENT_MODE", "structured")
    publish_event(bus, skill_event("skill-2"), "binary")
    drain(Worker(PackageBuilder(store), bus, store, group="g"))

    binary, structured = bus.records(topics.ENV_BUILT)
    assert record_mode(binary.headers) == "binary" and dict(binary.headers)["ce_producer"] == b"test-builder"
    assert record_mode(structured.headers) == "structured"
    assert [read_event(r).payload_as(EnvBuilt).skill_id for r in (binary, structured)] == ["skill-1", "skill-2"]


def test_a_dead_lettered_binary_event_keeps_its_headers(bus: MemoryBus, store: LocalStore) -> None:
    event = skill_event()
    publish_event(bus, event, "binary")
    drain(Worker(PackageBuilder(store, always_fail=True), bus, store, group="g", max_attempts=1, backoff_s=0))

    (letter,) = bus.records(topics.dlq(topics.SKILL_INGESTED))
    record = json.loads(letter.value)
    headers = tuple((name, base64.b64decode(value)) for name, value in record["headers_b64"])
    assert headers == bus.records(topics.SKILL_INGESTED)[0].headers
    assert from_record(base64.b64decode(record["value_b64"]), headers) == event
