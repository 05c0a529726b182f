"""The Worker when its dependencies fail: every record is delivered again until it is handled or
dead-lettered, nothing is passed over, and outages never cost an event an attempt."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from skillgym_core.bus.base import Subscription
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import read_event
from skillgym_core.contracts.events import EnvBuilt, Envelope, Payload, SkillIngested
from skillgym_core.errors import ContractError, DependencyUnavailable, MalformedModelOutput, StoreUnavailable
from skillgym_core.failures import ProcessingInterrupted
from skillgym_core.service import Worker
from skillgym_core.store.local import LocalStore

from tests.core.test_worker import PackageBuilder, metric, publish, skill_event
from tests.support.faults import FaultyBus, FaultyStore

SERVICE = "test-builder"


@pytest.fixture
def memory() -> MemoryBus:
    return MemoryBus()


@pytest.fixture
def bus(memory: MemoryBus) -> FaultyBus:
    return FaultyBus(memory)


@pytest.fixture
def store(tmp_path: Path) -> FaultyStore:
    return FaultyStore(LocalStore(tmp_path / "store"))


@pytest.fixture
def pauses() -> list[float]:
    return []


@pytest.fixture
def worker(bus: FaultyBus, store: FaultyStore, pauses: list[float]) -> Worker:
    service = PackageBuilder(store)
    return Worker(service, bus, store, group="g", max_attempts=2, backoff_s=0.01, backoff_max_s=0.04, pause=pauses.append)


def drain(worker: Worker, rounds: int = 30) -> None:
    for _ in range(rounds):
        worker.run_once(timeout_s=0)


def built_task_ids(memory: MemoryBus) -> list[str]:
    return [read_event(d).payload_as(EnvBuilt).task_id for d in memory.records(topics.ENV_BUILT)]


def calls(worker: Worker) -> int:
    service = worker.service
    assert isinstance(service, PackageBuilder)
    return len(service.call_times)


def publish_skills(memory: MemoryBus, count: int) -> list[str]:
    ids = [f"skill-{i}" for i in range(count)]
    for skill_id in ids:
        publish(memory, skill_event(skill_id))
    return ids


def assert_all_handled_once(worker: Worker, memory: MemoryBus, ids: list[str]) -> None:
    assert sorted(built_task_ids(memory)) == sorted(f"task-{i}" for i in ids)
    assert memory.records(topics.dlq(topics.SKILL_INGESTED)) == []
    assert worker.stats.dead_lettered == 0
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 0


@pytest.mark.parametrize(
    ("operation", "prefix", "handler_calls"),
    [
        ("exists", "state/", 3),  # reading the done-marker: the handler has not run yet
        ("put", "state/", 5),  # writing the done-marker: the handler runs again, nothing was published
        ("put", "packages/", 5),  # the handler's own write fails: a transient handler failure
    ],
)
def test_a_store_failure_mid_batch_redelivers_the_rest_of_the_batch(
    worker: Worker, memory: MemoryBus, store: FaultyStore, operation: str, prefix: str, handler_calls: int
) -> None:
    ids = publish_skills(memory, 3)
    store.fail_next(operation, prefix=prefix)
    store.fail_next(operation, prefix=prefix)  # the second try fails too

    first = worker.run_once(timeout_s=0)
    assert first == 3
    assert built_task_ids(memory) == []  # the first record failed: nothing of the batch went by
    drain(worker)

    assert_all_handled_once(worker, memory, ids)
    assert calls(worker) == handler_calls
    assert worker.stats.interruptions == 2
    assert store.injected[operation] == 2


def test_a_failure_after_the_first_record_keeps_it_and_redelivers_the_others(
    worker: Worker, memory: MemoryBus, store: FaultyStore
) -> None:
    ids = publish_skills(memory, 2)
    worker.run_once(timeout_s=0)
    late = [skill_event(f"late-{i}") for i in range(4)]
    for event in late:
        publish(memory, event)
    store.fail_next("exists", prefix=f"state/{SERVICE}/done/{late[1].event_id}")

    assert worker.run_once(timeout_s=0) == 4

    assert built_task_ids(memory) == ["task-skill-0", "task-skill-1", "task-late-0"]
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 3
    drain(worker)
    assert_all_handled_once(worker, memory, [*ids, *(f"late-{i}" for i in range(4))])
    assert calls(worker) == 6


def test_a_publish_failure_republishes_the_recorded_outputs_once(
    worker: Worker, memory: MemoryBus, bus: FaultyBus, store: FaultyStore
) -> None:
    ids = publish_skills(memory, 2)
    bus.fail_next("publish", times=3, prefix=topics.ENV_BUILT)

    drain(worker)

    assert_all_handled_once(worker, memory, ids)
    assert calls(worker) == 2  # the done-marker answered every redelivery
    assert worker.stats.duplicates == 3
    assert len(list(store.inner.list("packages/"))) == 2


def test_a_commit_failure_redelivers_and_the_done_marker_answers(
    worker: Worker, memory: MemoryBus, bus: FaultyBus
) -> None:
    ids = publish_skills(memory, 3)
    bus.fail_next("commit", times=2)

    drain(worker)

    assert calls(worker) == 3
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 0
    assert memory.records(topics.dlq(topics.SKILL_INGESTED)) == []
    # the batch was published, then not committed (twice): it is published again, the same events
    outputs = [read_event(d) for d in memory.records(topics.ENV_BUILT)]
    assert sorted({out.payload_as(EnvBuilt).task_id for out in outputs}) == sorted(f"task-{i}" for i in ids)
    assert len({out.event_id for out in outputs}) == 3
    assert len(outputs) == 3 * 3
    assert worker.stats.duplicates == 3 * 2


def test_handled_records_are_committed_once_per_batch(memory: MemoryBus, store: FaultyStore) -> None:
    commits: list[list[int]] = []

    class Counting(FaultyBus):
        def subscribe(self, topics_: Sequence[str], group: str, *, from_beginning: bool = True) -> Subscription:
            inner = super().subscribe(topics_, group, from_beginning=from_beginning)
            original = inner.commit_batch
            inner.commit_batch = lambda ds: (commits.append([d.offset for d in ds]), original(ds))[1]  # type: ignore[method-assign]
            return inner

    worker = Worker(PackageBuilder(store), Counting(memory), store, group="g", commit_interval_s=3600)
    ids = publish_skills(memory, 5)

    assert worker.run_once(timeout_s=0) == 5

    assert commits == [[0, 1, 2, 3, 4]] and memory.pending("g", [topics.SKILL_INGESTED]) == 0
    assert sorted(built_task_ids(memory)) == sorted(f"task-{i}" for i in ids)


def test_an_outage_longer_than_max_attempts_dead_letters_nothing(
    worker: Worker, memory: MemoryBus, store: FaultyStore, pauses: list[float]
) -> None:
    ids = publish_skills(memory, 2)
    store.down = True
    for _ in range(8):
        assert worker.run_once(timeout_s=0) == 2
    assert built_task_ids(memory) == []
    assert worker.health.down() == ["store"]
    assert pauses == [0.01, 0.02, 0.04, 0.04, 0.04, 0.04, 0.04, 0.04]  # capped exponential backoff

    store.down = False
    drain(worker)

    assert_all_handled_once(worker, memory, ids)
    assert worker.health.down() == []
    assert worker.stats.interruptions == 8


def test_a_transient_handler_error_is_waited_out_beyond_max_attempts(
    bus: FaultyBus, memory: MemoryBus, store: FaultyStore, pauses: list[float]
) -> None:
    outage = [StoreUnavailable("S3 put failed: connection refused", key="k") for _ in range(5)]
    service = PackageBuilder(store, failures=outage)
    worker = Worker(service, bus, store, group="g", max_attempts=2, backoff_s=0.01, pause=pauses.append)
    ids = publish_skills(memory, 1)

    drain(worker)

    assert_all_handled_once(worker, memory, ids)
    assert len(service.call_times) == 6
    assert worker.stats.interruptions == 5
    failed = metric("skillgym_events_failed_total", service=SERVICE, topic=topics.SKILL_INGESTED, reason="unreachable")
    assert failed >= 5


def test_a_one_shot_run_gives_up_on_a_transient_handler_error_after_its_patience(
    bus: FaultyBus, memory: MemoryBus, store: FaultyStore, pauses: list[float]
) -> None:
    endpoint_down = [DependencyUnavailable("baseline endpoint down", dependency="baseline-llm") for _ in range(1000)]
    service = PackageBuilder(store, failures=endpoint_down)
    worker = Worker(service, bus, store, group="g", max_attempts=2, backoff_s=0.01, pause=pauses.append,
                    transient_patience_s=0.05)
    publish_skills(memory, 1)

    for _ in range(1000):
        worker.run_once(timeout_s=0)
        if worker.stats.dead_lettered:
            break

    (letter,) = [json.loads(d.value) for d in memory.records(topics.dlq(topics.SKILL_INGESTED))]
    assert letter["error"]["reason"] == "unavailable" and letter["error"]["dependency"] == "baseline-llm"
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 0 and built_task_ids(memory) == []


def test_a_model_answer_in_the_wrong_form_is_retried_a_bounded_number_of_times(
    bus: FaultyBus, memory: MemoryBus, store: FaultyStore, pauses: list[float]
) -> None:
    unreadable = [MalformedModelOutput("judge gave no numeric score", reason="judge_malformed") for _ in range(10)]
    service = PackageBuilder(store, failures=unreadable)
    worker = Worker(service, bus, store, group="g", max_attempts=2, backoff_s=0.01, pause=pauses.append)
    publish_skills(memory, 1)

    drain(worker)

    assert len(service.call_times) == 2 and worker.stats.dead_lettered == 1 and worker.stats.interruptions == 0


def test_poison_is_dead_lettered_at_once_while_a_good_record_waits_out_the_store(
    worker: Worker, memory: MemoryBus, store: FaultyStore
) -> None:
    memory.publish(topics.SKILL_INGESTED, "bad", b"\x00not an envelope")
    ids = publish_skills(memory, 1)
    store.down = True

    worker.run_once(timeout_s=0)

    dead = memory.records(topics.dlq(topics.SKILL_INGESTED))
    assert [json.loads(d.value)["error"]["reason"] for d in dead] == ["poison"]
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 1  # the poison record is committed
    store.down = False
    drain(worker)
    assert built_task_ids(memory) == [f"task-{ids[0]}"]
    assert len(memory.records(topics.dlq(topics.SKILL_INGESTED))) == 1


def test_a_non_retryable_error_is_dead_lettered_on_its_first_attempt(
    bus: FaultyBus, memory: MemoryBus, store: FaultyStore
) -> None:
    service = PackageBuilder(store, failures=[ContractError("bad skill record", field="name")])
    worker = Worker(service, bus, store, group="g", max_attempts=5, pause=lambda _: None)
    publish_skills(memory, 1)

    drain(worker)

    record = json.loads(memory.records(topics.dlq(topics.SKILL_INGESTED))[0].value)
    assert (record["attempts"], record["error"]["reason"], record["error"]["field"]) == (1, "contract", "name")
    assert len(service.call_times) == 1


def test_a_failed_dead_letter_is_retried_without_running_the_handler_again(
    bus: FaultyBus, memory: MemoryBus, store: FaultyStore
) -> None:
    service = PackageBuilder(store, always_fail=True)
    worker = Worker(service, bus, store, group="g", max_attempts=2, pause=lambda _: None)
    publish_skills(memory, 1)
    bus.fail_next("publish", times=2, prefix=topics.dlq(topics.SKILL_INGESTED))

    drain(worker)

    dead = memory.records(topics.dlq(topics.SKILL_INGESTED))
    assert [json.loads(d.value)["attempts"] for d in dead] == [2]
    assert len(service.call_times) == 2
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 0


def test_a_poll_failure_pauses_and_marks_the_broker_down(worker: Worker, bus: FaultyBus, memory: MemoryBus) -> None:
    ids = publish_skills(memory, 1)
    bus.fail_next("poll")

    assert worker.run_once(timeout_s=0) == 0
    assert worker.health.down() == ["broker"]
    assert isinstance(worker.last_interruption, ProcessingInterrupted)
    assert worker.last_interruption.details["action"] == "poll"
    drain(worker)
    assert_all_handled_once(worker, memory, ids)
    assert worker.health.down() == []


class GarbageOnce(PackageBuilder):
    """Returns something that is not a payload once: a bug outside the handler's retry loop."""

    def handle(self, event: Envelope) -> Sequence[Payload]:
        outputs = super().handle(event)
        if len(self.call_times) == 1:
            return [object()]  # type: ignore[list-item]
        return outputs


def test_an_unexpected_error_outside_the_handler_rewinds_then_escapes(
    bus: FaultyBus, memory: MemoryBus, store: FaultyStore
) -> None:
    service = GarbageOnce(store)
    worker = Worker(service, bus, store, group="g", pause=lambda _: None)
    ids = publish_skills(memory, 2)

    with pytest.raises(AttributeError):
        worker.run_once(timeout_s=0)

    assert memory.pending("g", [topics.SKILL_INGESTED]) == 2
    drain(worker)
    assert_all_handled_once(worker, memory, ids)


def test_interruptions_are_reported_with_where_and_why(worker: Worker, memory: MemoryBus, store: FaultyStore) -> None:
    publish_skills(memory, 1)
    store.fail_next("put", prefix="state/")

    worker.run_once(timeout_s=0)

    interrupted = worker.last_interruption
    assert interrupted is not None
    assert interrupted.reason == "interrupted"
    assert interrupted.dependency == "store"
    assert interrupted.details["action"] == "write done-marker"
    assert (interrupted.details["topic"], interrupted.details["partition"], interrupted.details["offset"]) == (
        topics.SKILL_INGESTED,
        0,
        0,
    )
    assert interrupted.details["cause"]["reason"] == "unreachable"


def test_an_unreadable_done_marker_is_handled_again_and_rewritten(
    worker: Worker, memory: MemoryBus, store: FaultyStore
) -> None:
    event = skill_event("skill-0")
    marker = f"state/{SERVICE}/done/{event.event_id}.json"
    store.inner.put_bytes(marker, b'[{"not": "an envelope"}]')
    publish(memory, event)

    drain(worker)

    assert_all_handled_once(worker, memory, ["skill-0"])
    assert calls(worker) == 1
    assert json.loads(store.inner.get_bytes(marker))[0]["event_id"] == read_event(memory.records(topics.ENV_BUILT)[0]).event_id


class ConcurrentBuilder(PackageBuilder):
    concurrent = True

    def __init__(self, store: FaultyStore, fail_skill: str | None = None) -> None:
        super().__init__(store)
        self.fail_skill = fail_skill
        self.threads: set[str] = set()

    def handle(self, event: Envelope) -> Sequence[Payload]:
        import threading
        import time

        self.threads.add(threading.current_thread().name)
        time.sleep(0.02)
        if event.payload_as(SkillIngested).skill_id == self.fail_skill:
            self.fail_skill = None
            raise StoreUnavailable("S3 put failed: connection refused", key="k")
        return super().handle(event)


def test_a_concurrent_stage_handles_a_batch_on_several_threads_and_loses_nothing(
    bus: FaultyBus, memory: MemoryBus, store: FaultyStore, pauses: list[float]
) -> None:
    service = ConcurrentBuilder(store, fail_skill="skill-2")
    worker = Worker(service, bus, store, group="g", backoff_s=0.01, pause=pauses.append, concurrency=4)
    ids = publish_skills(memory, 8)

    first = worker.run_once(timeout_s=0, max_records=8)
    assert first == 8 and worker.stats.interruptions == 1
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 8 - 2  # committed up to the failed record
    drain(worker)

    outputs = [read_event(d) for d in memory.records(topics.ENV_BUILT)]
    assert sorted({out.payload_as(EnvBuilt).task_id for out in outputs}) == sorted(f"task-{i}" for i in ids)
    assert len({out.event_id for out in outputs}) == 8  # repeats are the same events, published again
    assert calls(worker) == 8 and worker.stats.dead_lettered == 0  # each skill built once
    assert memory.pending("g", [topics.SKILL_INGESTED]) == 0
    assert len(service.threads) > 1
    assert worker.stats.duplicates == len(outputs) - 8  # each repeat was answered by its done-marker


def test_a_stage_not_marked_concurrent_stays_on_one_thread(bus: FaultyBus, memory: MemoryBus, store: FaultyStore) -> None:
    worker = Worker(PackageBuilder(store), bus, store, group="g", concurrency=4)
    assert worker.concurrency == 1
