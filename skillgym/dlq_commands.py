"""``skillgym dlq list|show|replay``: the dead letters of the pipeline's topics, read without
disturbing any consumer, listed one per row, shown in full, or replayed onto their original
topics (once each). The bus and store come from the ``SKILLGYM_*`` settings, or from an embedded
run's directory with ``--run``."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from skillgym_core.bus.dlq import (
    RUN_LOG_DIR,
    DeadLetter,
    DeadLetterError,
    DeadLetterSource,
    KafkaDeadLetters,
    LoggedDeadLetters,
)
from skillgym_core.contracts.topics import ALL_TOPICS, DLQ_SUFFIX, dlq
from skillgym_core.settings import CommonSettings
from skillgym_core.store.base import Store
from skillgym_core.store.local import LocalStore

from skillgym.console import console
from skillgym.dlq_replay import ReplayLedger, replay

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def since_arg(text: str) -> dt.datetime:
    """A duration back from now (``90s``, ``30m``, ``2h``, ``7d``, ``1w``) or an ISO time (naive: UTC)."""
    match = DURATION.match(text.strip())
    if match:
        return dt.datetime.now(dt.UTC) - dt.timedelta(seconds=float(match.group(1)) * SECONDS[match.group(2)])
    try:
        parsed = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO time nor a duration such as 30m, 2h, 7d: {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


@dataclass
class Backends:
    source: DeadLetterSource
    store: Store
    run_dir: Path | None
    settings: CommonSettings | None


@contextmanager
def open_backends(run_dir: Path | None, timeout_s: float) -> Iterator[Backends]:
    """An embedded run's kept dead letters and store, or the configured bus and store."""
    if run_dir is not None:
        if not (run_dir / "store").is_dir():
            raise DeadLetterError(f"{run_dir}: not a run directory (no store/ below it)", reason="no_run",
                                  path=str(run_dir))
        yield Backends(LoggedDeadLetters(run_dir / RUN_LOG_DIR), LocalStore(run_dir / "store"), run_dir, None)
        return
    settings = CommonSettings()
    if settings.bus == "memory":
        raise DeadLetterError(
            "SKILLGYM_BUS=memory keeps nothing beyond the process that ran it: give --run RUN_DIR (an embedded "
            "run) or SKILLGYM_BUS=kafka",
            reason="no_bus",
        )
    from skillgym_core.store.factory import make_store

    source = KafkaDeadLetters(settings.kafka_bootstrap, prefix=settings.topic_prefix, timeout_s=timeout_s)
    try:
        yield Backends(source, make_store(settings), None, settings)
    finally:
        source.close()


def dead_letter_topics(requested: Sequence[str] | None, source: DeadLetterSource) -> list[str]:
    """The ``.dlq`` topics to read: those of ``requested`` (original or ``.dlq`` names), else
    of every pipeline topic."""
    if not requested:
        return [dlq(topic) for topic in ALL_TOPICS]
    chosen = []
    for name in requested:
        topic = name.removesuffix(DLQ_SUFFIX)
        if topic not in ALL_TOPICS and not source.holds(dlq(topic)):
            raise DeadLetterError(
                f"unknown topic {name!r}: not a pipeline topic ({', '.join(ALL_TOPICS)}) and {source.describe()} "
                f"holds no {dlq(topic)}",
                reason="unknown_topic",
                topic=name,
            )
        chosen.append(dlq(topic))
    return list(dict.fromkeys(chosen))


def read_letters(source: DeadLetterSource, topics: Sequence[str]) -> list[DeadLetter]:
    letters = [letter for topic in topics if source.holds(topic) for letter in source.read(topic)]
    oldest = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(letters, key=lambda lt: (lt.when or oldest, lt.dlq_topic, lt.partition, lt.offset))


def select(letters: Sequence[DeadLetter], since: dt.datetime | None, letter_id: str | None) -> list[DeadLetter]:
    """``letters`` written at or after ``since`` (a letter that does not say when is left out)
    whose id is ``letter_id`` or, failing that, starts with it (one id only)."""
    chosen = [lt for lt in letters if since is None or (lt.when is not None and lt.when >= since)]
    if letter_id is None:
        return chosen
    exact = [lt for lt in chosen if lt.id == letter_id]
    if exact:
        return exact
    prefixed = [lt for lt in chosen if lt.id.startswith(letter_id)]
    ids = sorted({lt.id for lt in prefixed})
    if not ids:
        raise DeadLetterError(f"no dead letter with id {letter_id!r} among the {len(chosen)} read",
                              reason="no_such_letter", id=letter_id)
    if len(ids) > 1:
        raise DeadLetterError(f"id {letter_id!r} is the start of {len(ids)} ids: {', '.join(ids[:5])}",
                              reason="ambiguous_id", id=letter_id, matches=ids[:20])
    return prefixed


def summary(letter: DeadLetter, status: str) -> dict[str, Any]:
    return {
        "id": letter.id, "topic": letter.topic, "service": letter.service, "reason": letter.reason,
        "attempts": letter.attempts, "when": letter.when.isoformat() if letter.when else None, "status": status,
        "dlq_topic": letter.dlq_topic, "partition": letter.partition, "offset": letter.offset, "key": letter.key,
    }  # fmt: skip


KNOWN_FIELDS = {"service", "topic", "partition", "offset", "key", "attempts", "error", "value_b64", "headers_b64"}


def in_full(letter: DeadLetter, status: str) -> dict[str, Any]:
    """The letter with its error, where the original event was read from, the letter's other
    fields, the original record's headers, and the original event decoded (or its bytes as text
    when they are no event)."""
    if letter.event is not None:
        original: dict[str, Any] = {"event": letter.event.model_dump(mode="json")}
    else:
        original = {"value": None if letter.value is None else letter.value.decode("utf-8", "replace")}
    if letter.headers:
        original["headers"] = [[name, value.decode("utf-8", "replace")] for name, value in letter.headers]
    return {
        **summary(letter, status),
        "error": letter.error,
        "read_from": {"partition": letter.record.get("partition"), "offset": letter.record.get("offset")},
        "other_fields": {name: value for name, value in letter.record.items() if name not in KNOWN_FIELDS},
        **original,
    }


def _cmd_list(args: argparse.Namespace, backends: Backends, letters: list[DeadLetter]) -> int:
    ledger = ReplayLedger(backends.store)
    rows = [summary(letter, ledger.status(letter)) for letter in letters]
    if args.json:
        for row in rows:
            print(json.dumps(row), flush=True)
        return 0
    table = Table(title=f"Dead letters ({len(rows)}) in {backends.source.describe()}")
    for column in ("id", "topic", "service", "reason", "attempts", "when", "status"):
        table.add_column(column, no_wrap=column in ("id", "when"))
    for row in rows:
        when = row["when"][:19].replace("T", " ") if row["when"] else "-"
        attempts = "-" if row["attempts"] is None else str(row["attempts"])
        table.add_row(row["id"], row["topic"], row["service"] or "-", row["reason"], attempts, when, row["status"])
    console.print(table)
    return 0


def _cmd_show(args: argparse.Namespace, backends: Backends, letters: list[DeadLetter]) -> int:
    ledger = ReplayLedger(backends.store)
    for letter in letters:
        record = in_full(letter, ledger.status(letter))
        print(json.dumps(record, default=str) if args.json else json.dumps(record, indent=2, default=str), flush=True)
    return 0


def _cmd_replay(args: argparse.Namespace, backends: Backends, letters: list[DeadLetter], read: list[DeadLetter]) -> int:
    if backends.settings is None:
        raise DeadLetterError(
            f"{backends.run_dir}: an embedded run's bus ended with the run, so there is nothing to replay onto; "
            "run `skillgym run` again with the same --out to handle its dead-lettered events again",
            reason="no_bus",
        )
    from skillgym_core.bus.factory import make_bus

    bus = make_bus(backends.settings)
    try:
        report = replay(letters, read, bus, backends.store)
    finally:
        bus.close()
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        print(f"replayed {report.replayed}, already replayed {report.already_replayed} (skipped), resolved "
              f"{report.resolved}, not replayable {report.not_replayable}; remaining {report.remaining}")
    return 0


def _cmd_dlq(args: argparse.Namespace) -> int:
    with open_backends(args.run, args.timeout) as backends:
        read = read_letters(backends.source, dead_letter_topics(args.topic, backends.source))
        letters = select(read, args.since, args.id)
        if args.action == "list":
            return _cmd_list(args, backends, letters)
        if args.action == "show":
            return _cmd_show(args, backends, letters)
        return _cmd_replay(args, backends, letters, read)


def register(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--topic", action="append", metavar="TOPIC",
                        help="an original topic (or its .dlq name); repeatable; default: every pipeline topic")
    common.add_argument("--since", type=since_arg, metavar="WHEN",
                        help="only letters written since an ISO time (naive: UTC) or for a duration (30m, 2h, 7d)")
    common.add_argument("--run", type=Path, metavar="RUN_DIR",
                        help="an embedded run's directory instead of the bus and store of the SKILLGYM_* settings")
    common.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="seconds allowed to reach Kafka and to read each dead-letter topic (default 10)")
    common.add_argument("--json", action="store_true", help="JSON instead of text")

    dlq_parser = sub.add_parser("dlq", help="list, show and replay dead letters (<topic>.dlq)")
    actions = dlq_parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", parents=[common], help="one row per dead letter (--json: one JSON record per line)")
    listing.add_argument("--id", help="only the letters of this event id (or of the one id starting so)")
    show = actions.add_parser("show", parents=[common], help="a dead letter in full, its original event decoded")
    show.add_argument("--id", required=True, help="the event id (or the start of it)")
    replaying = actions.add_parser("replay", parents=[common],
                                   help="publish the original events back onto their topics, once each")
    replaying.add_argument("--id", help="only the letters of this event id (or of the one id starting so)")
    dlq_parser.set_defaults(func=_cmd_dlq)
