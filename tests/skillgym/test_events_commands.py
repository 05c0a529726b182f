"""``skillgym events schemas|dump``: the published contracts written to a folder, and events
printed as CloudEvents JSON from an embedded run's directory and from Kafka."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from skillgym_core.bus.base import Delivery
from skillgym_core.bus.kafka import KafkaBus
from skillgym_core.bus.prefixed import PrefixedBus
from skillgym_core.bus.record_log import EVENT_LOG_DIR, write_record_log
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import EventMode, to_record, to_structured
from skillgym_core.contracts.events import Envelope
from skillgym_core.contracts.schemas import artifacts

from skillgym.cli import EXIT_ERROR, main
from tests.core.test_worker import skill_event
from tests.skillgym.test_dlq_commands import error_of, json_lines
from tests.support.services import KafkaServer, free_port


def record(event: Envelope, mode: EventMode, offset: int) -> Delivery:
    out = to_record(event, mode)
    return Delivery(out.topic, 0, offset, out.key, out.value, out.headers)


def test_schemas_writes_every_published_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["events", "schemas", "--out", str(tmp_path / "contracts")]) == 0
    written = {Path(line).name for line in capsys.readouterr().out.split()}
    assert written == set(artifacts())
    for name, text in artifacts().items():
        assert (tmp_path / "contracts" / name).read_text() == text


def test_dump_prints_a_runs_events_as_structured_cloudevents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = [skill_event(f"skill-{i}") for i in range(3)]
    legacy = Delivery(topics.SKILL_INGESTED, 0, 3, "old", events[2].to_bytes())
    poison = Delivery(topics.SKILL_INGESTED, 0, 4, "poison", b"{not an event")
    write_record_log(tmp_path / "run" / EVENT_LOG_DIR,
                     [record(events[0], "binary", 0), record(events[1], "structured", 1), legacy, poison])  # fmt: skip

    assert main(["events", "dump", str(tmp_path / "run")]) == 0
    captured = capsys.readouterr()
    assert json_lines(captured.out) == [to_structured(event) for event in events]
    assert captured.err.startswith(f"skipped {topics.SKILL_INGESTED}/0/4: ")

    assert main(["events", "dump", str(tmp_path / "run"), "--topic", topics.ENV_BUILT]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["events", "dump", "{tmp}", "--topic", "no-such-topic"], "unknown_topic"),
        (["events", "dump", "{tmp}"], "no_event_log"),
        (["events", "dump", "--bootstrap", "127.0.0.1:{port}", "--timeout", "1"], "broker_unreachable"),
    ],
)
def test_errors_are_one_typed_line(
    argv: list[str], reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [a.format(tmp=tmp_path, port=free_port()) for a in argv]
    assert main(args) == EXIT_ERROR
    assert error_of(capsys).startswith(f"error: {reason}: ")


@pytest.mark.integration
def test_dump_reads_kafka_behind_the_topic_prefix(
    kafka: KafkaServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = f"dump-{uuid.uuid4().hex[:8]}."
    bus = PrefixedBus(KafkaBus(kafka.bootstrap), prefix)
    events = [skill_event("skill-a"), skill_event("skill-b")]
    try:
        bus.ensure_topics(list(topics.ALL_TOPICS))
        for event, mode in zip(events, ("binary", "structured"), strict=True):
            out = to_record(event, mode)  # type: ignore[arg-type]
            bus.publish(out.topic, out.key, out.value, out.headers)
    finally:
        bus.close()
    monkeypatch.setenv("SKILLGYM_TOPIC_PREFIX", prefix)

    assert main(["events", "dump", "--bootstrap", kafka.bootstrap, "--topic", topics.SKILL_INGESTED]) == 0
    dumped = json_lines(capsys.readouterr().out)
    assert sorted(dumped, key=lambda e: str(e["subject"])) == [to_structured(event) for event in events]
