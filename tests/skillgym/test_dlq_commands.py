"""``skillgym dlq``: list, show and replay over an embedded run's directory and over Kafka,
and the one-line errors a user meets."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from skillgym_core.bus.dlq import RUN_LOG_DIR, write_dead_letter_log
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.events import Envelope
from skillgym_core.service import Worker
from skillgym_core.store.local import LocalStore

from skillgym.cli import EXIT_ERROR, main
from tests.core.bus.test_kafka_worker import read_matching
from tests.core.test_worker import PackageBuilder, publish, skill_event
from tests.support.services import KafkaServer, free_port

SKILL_DLQ = topics.dlq(topics.SKILL_INGESTED)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """An embedded run whose builder dead-lettered one event and one poison record."""
    run = tmp_path / "run"
    store = LocalStore(run / "store")
    bus = MemoryBus()
    publish(bus, skill_event("skill-1"))
    bus.publish(topics.SKILL_INGESTED, "poison", b"{not json")
    Worker(PackageBuilder(store, always_fail=True), bus, store, max_attempts=2, backoff_s=0).run_once()
    write_dead_letter_log(run / RUN_LOG_DIR, bus.records(SKILL_DLQ))
    return run


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def error_of(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_list_shows_one_row_per_letter(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dlq", "list", "--run", str(run_dir), "--json"]) == 0
    rows = json_lines(capsys.readouterr().out)
    assert [(r["topic"], r["service"], r["reason"], r["attempts"], r["status"]) for r in rows] == [
        (topics.SKILL_INGESTED, "test-builder", "sandbox", 2, "remaining"),
        (topics.SKILL_INGESTED, "test-builder", "poison", 0, "remaining"),
    ]
    assert rows[0]["id"] == skill_event("skill-1").event_id and str(rows[1]["id"]).startswith("raw-")
    assert all(r["when"] for r in rows)

    assert main(["dlq", "list", "--run", str(run_dir)]) == 0
    assert "Dead letters (2)" in capsys.readouterr().err


def test_since_and_topic_narrow_the_list(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dlq", "list", "--run", str(run_dir), "--json", "--since", "1h"]) == 0
    assert len(json_lines(capsys.readouterr().out)) == 2
    assert main(["dlq", "list", "--run", str(run_dir), "--json", "--since", "2999-01-01T00:00:00"]) == 0
    assert json_lines(capsys.readouterr().out) == []
    assert main(["dlq", "list", "--run", str(run_dir), "--json", "--topic", "env-built.dlq"]) == 0
    assert json_lines(capsys.readouterr().out) == []
    with pytest.raises(SystemExit):
        main(["dlq", "list", "--run", str(run_dir), "--since", "yesterday"])


def test_show_decodes_the_original_event(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = skill_event("skill-1")
    assert main(["dlq", "show", "--run", str(run_dir), "--id", event.event_id[:10], "--json"]) == 0
    (shown,) = json_lines(capsys.readouterr().out)
    original = Envelope.model_validate(shown["event"])
    assert (original.event_id, original.payload) == (event.event_id, event.payload)
    assert shown["error"]["reason"] == "sandbox"  # type: ignore[index]
    assert shown["read_from"] == {"partition": 0, "offset": 0} and shown["other_fields"] == {}


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["dlq", "show", "--id", "evt-nope"], "no_such_letter"),
        (["dlq", "list", "--topic", "kitchen-sink"], "unknown_topic"),
        (["dlq", "replay"], "no_bus"),
    ],
)
def test_mistakes_are_one_typed_line(
    run_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], reason: str
) -> None:
    assert main([*argv, "--run", str(run_dir)]) == EXIT_ERROR
    assert error_of(capsys).startswith(f"error: {reason}: ")


def test_a_directory_that_is_no_run_and_a_bus_that_keeps_nothing_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["dlq", "list", "--run", str(tmp_path)]) == EXIT_ERROR
    assert error_of(capsys).startswith("error: no_run: ")
    monkeypatch.setenv("SKILLGYM_BUS", "memory")
    assert main(["dlq", "list"]) == EXIT_ERROR
    assert error_of(capsys).startswith("error: no_bus: ")


def test_an_unreachable_broker_is_one_typed_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLGYM_BUS", "kafka")
    monkeypatch.setenv("SKILLGYM_KAFKA_BOOTSTRAP", f"127.0.0.1:{free_port()}")
    assert main(["dlq", "list", "--timeout", "1"]) == EXIT_ERROR
    assert error_of(capsys).startswith("error: broker_unreachable: ")


@pytest.mark.integration
def test_replay_over_kafka_publishes_each_letter_once(
    kafka: KafkaServer, tmp_path: Path, fresh_group: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("SKILLGYM_BUS", "kafka")
    monkeypatch.setenv("SKILLGYM_KAFKA_BOOTSTRAP", kafka.bootstrap)
    monkeypatch.setenv("SKILLGYM_STORE", "local")
    monkeypatch.setenv("SKILLGYM_STORE_ROOT", str(tmp_path / "store"))
    bus = KafkaBus(kafka.bootstrap, partitions=2)
    topic = f"in-{uuid.uuid4().hex[:10]}"
    bus.ensure_topics([topic, topics.ENV_BUILT])
    store = LocalStore(tmp_path / "store")
    worker = Worker(PackageBuilder(store, always_fail=True, consumes=(topic,)), bus, store, group=fresh_group,
                    max_attempts=1)  # fmt: skip
    events = [skill_event(f"skill-{i}") for i in range(2)]
    for event in events:
        publish(bus, event, topic)
    while worker.stats.dead_lettered < 2:
        worker.run_once(timeout_s=0.5)
    worker.close()

    assert main(["dlq", "replay", "--topic", topic, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["replayed"] == 2
    assert main(["dlq", "replay", "--topic", f"{topic}.dlq", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["replayed"], second["already_replayed"], second["remaining"]) == (0, 2, 0)
    republished = read_matching(bus, topic, lambda d: True, count=4)
    assert sorted(d.value for d in republished) == sorted(e.to_bytes() for e in events for _ in range(2))

    assert main(["dlq", "list", "--topic", topic, "--json"]) == 0
    assert {r["status"] for r in json_lines(capsys.readouterr().out)} == {"replayed"}
    bus.close()
