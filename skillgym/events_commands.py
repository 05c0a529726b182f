"""``skillgym events schemas|dump``: write the published event contracts (a JSON Schema per
payload and the AsyncAPI document), and print events as CloudEvents JSON, one per line, from an
embedded run's directory or from Kafka (read without joining any consumer group)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from skillgym_core.bus.base import Delivery
from skillgym_core.bus.record_log import EVENT_LOG_DIR, read_record_log
from skillgym_core.contracts.cloudevents import read_event, to_structured
from skillgym_core.contracts.schemas import write_artifacts
from skillgym_core.contracts.topics import ALL_TOPICS
from skillgym_core.errors import PoisonEventError, SkillGymError
from skillgym_core.settings import CommonSettings


class EventsCommandError(SkillGymError):
    reason = "events"


def chosen_topics(requested: Sequence[str] | None) -> list[str]:
    unknown = [name for name in requested or () if name not in ALL_TOPICS]
    if unknown:
        raise EventsCommandError(f"unknown topic {unknown[0]!r}: choose among {', '.join(ALL_TOPICS)}",
                                 reason="unknown_topic", topic=unknown[0])  # fmt: skip
    return list(dict.fromkeys(requested)) if requested else list(ALL_TOPICS)


def run_records(run_dir: Path, topics: Sequence[str]) -> Iterator[Delivery]:
    """The records an embedded run kept in ``RUN_DIR/events/``."""
    directory = run_dir / EVENT_LOG_DIR
    if not directory.is_dir():
        raise EventsCommandError(
            f"{directory} does not exist: not an embedded run directory, or one made before its events were kept",
            reason="no_event_log",
            path=str(directory),
        )
    for topic in topics:
        for delivery, _ in read_record_log(directory, topic):
            yield delivery


def kafka_records(bootstrap: str, prefix: str, topics: Sequence[str], timeout_s: float) -> Iterator[Delivery]:
    from skillgym_core.bus.snapshot import KafkaSnapshot

    snapshot = KafkaSnapshot(bootstrap, prefix=prefix, timeout_s=timeout_s)
    try:
        for topic in topics:
            yield from snapshot.read(topic)
    finally:
        snapshot.close()


def _cmd_schemas(args: argparse.Namespace) -> int:
    for path in write_artifacts(Path(args.out)):
        print(path)
    return 0


def _cmd_dump(args: argparse.Namespace) -> int:
    topics = chosen_topics(args.topic)
    if args.run_dir is not None:
        records = run_records(Path(args.run_dir), topics)
    else:
        settings = CommonSettings()
        records = kafka_records(args.bootstrap or settings.kafka_bootstrap, settings.topic_prefix, topics, args.timeout)
    skipped = 0
    for delivery in records:
        try:
            event: dict[str, Any] = to_structured(read_event(delivery))
        except PoisonEventError as exc:
            skipped += 1
            where = f"{delivery.topic}/{delivery.partition}/{delivery.offset}"
            print(f"skipped {where}: {' '.join(str(exc).split())}", file=sys.stderr)
            continue
        print(json.dumps(event), flush=True)
    return 0


def register(sub: Any) -> None:
    events = sub.add_parser("events", help="the event contracts (JSON Schemas, AsyncAPI) and the events themselves")
    actions = events.add_subparsers(dest="action", required=True)
    schemas = actions.add_parser("schemas", help="write a JSON Schema per payload and the AsyncAPI document")
    schemas.add_argument("--out", required=True, metavar="DIR", help="the folder to write them to")
    schemas.set_defaults(func=_cmd_schemas)
    dump = actions.add_parser("dump", help="print events as CloudEvents JSON, one per line (records that hold "
                                           "no event are named on stderr)")  # fmt: skip
    dump.add_argument("run_dir", nargs="?", metavar="RUN_DIR",
                      help="an embedded run's directory; without it, Kafka (the SKILLGYM_* settings)")  # fmt: skip
    dump.add_argument("--topic", action="append", metavar="TOPIC", help="a topic; repeatable; default: every topic")
    dump.add_argument("--bootstrap", metavar="HOST:PORT", help="Kafka brokers (default: SKILLGYM_KAFKA_BOOTSTRAP)")
    dump.add_argument("--timeout", type=float, default=10.0, metavar="S",
                      help="seconds allowed to reach Kafka and to read each topic (default 10)")  # fmt: skip
    dump.set_defaults(func=_cmd_dump)
