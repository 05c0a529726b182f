"""The consumer examples run against a real broker: events published by SkillGym's own KafkaBus
are read, decoded and (with the CloudEvents SDK) validated against the published schemas."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from skillgym_core.bus.dlq import parse_dead_letter
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import EventMode, to_record
from skillgym_core.contracts.events import EnvBuilt, Envelope, EnvValidated

from tests.core.bus.test_kafka_worker import read_matching
from tests.support.services import KafkaServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "consumers"
pytestmark = pytest.mark.integration


def publish(bus: KafkaBus, topic: str, event: Envelope, mode: EventMode, value: bytes | None = None) -> None:
    record = to_record(event, mode)
    bus.publish(topic, record.key, record.value if value is None else value, record.headers)


def run_example(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=90,
                          check=False)  # fmt: skip


def lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_kafka_python_example_handles_typed_events_and_dead_letters_junk(kafka: KafkaServer) -> None:
    topic = f"examples-{uuid.uuid4().hex[:8]}.{topics.ENV_VALIDATED}"
    bus = KafkaBus(kafka.bootstrap, partitions=1)  # one partition: the order the example reads is the order published
    valid = Envelope.wrap(EnvValidated(task_id="t1", skill_id="s", package_key="p", valid=True, label="skill-dep"),
                          producer="validator", correlation_id="run")  # fmt: skip
    rejected = Envelope.wrap(EnvValidated(task_id="t2", skill_id="s", package_key="p", valid=False, reasons=["flaky"]),
                             producer="validator", correlation_id="run")  # fmt: skip
    try:
        bus.ensure_topics([topic])
        publish(bus, topic, valid, "binary")
        bus.publish(topic, "junk", b"{not an event")
        publish(bus, topic, rejected, "structured")
        done = run_example("kafka_python_consumer.py", "--bootstrap", kafka.bootstrap, "--topic", topic,
                           "--group", f"example-{uuid.uuid4().hex[:8]}", "--max-events", "3")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert [(line["id"], line["says"]) for line in lines(done.stdout)] == [
            (valid.event_id, "task t1 is ready for sampling (skill-dep)"),
            (rejected.event_id, "task t2 was rejected: flaky"),
        ]
        assert "handled 2, dead-lettered 1" in done.stderr
        (letter,) = read_matching(bus, topics.dlq(topic), lambda d: True, count=1)
        assert parse_dead_letter(letter).reason == "poison"
    finally:
        bus.close()


def test_the_cloudevents_sdk_example_validates_every_event_against_the_published_schema(kafka: KafkaServer) -> None:
    topic = f"examples-{uuid.uuid4().hex[:8]}.{topics.ENV_BUILT}"
    bus = KafkaBus(kafka.bootstrap, partitions=1)  # one partition: the order the example reads is the order published
    built = [Envelope.wrap(EnvBuilt(task_id=f"t{i}", skill_id="s", package_key="p", template="cli"), producer="builder",
                           correlation_id="run") for i in range(3)]  # fmt: skip
    try:
        bus.ensure_topics([topic])
        publish(bus, topic, built[0], "binary")
        publish(bus, topic, built[1], "structured")
        broken = json.loads(to_record(built[2], "binary").value) | {"revision": "second"}
        publish(bus, topic, built[2], "binary", json.dumps(broken).encode())
        done = run_example("cloudevents_consumer.py", "--bootstrap", kafka.bootstrap, "--topic", topic,
                           "--max-events", "3", "--timeout", "30")  # fmt: skip
    finally:
        bus.close()

    assert done.returncode == 1, done.stderr  # one event's data breaks its schema
    results = lines(done.stdout)
    assert [(r["id"], r["valid"]) for r in results] == [(built[0].event_id, True), (built[1].event_id, True),
                                                         (built[2].event_id, False)]  # fmt: skip
    assert results[0]["type"] == "io.skillgym.env-built.v1" and results[0]["subject"] == "t0"
    assert results[2]["errors"] == ["revision: 'second' is not of type 'integer'"]
