"""Records kept in files. An embedded run's bus ends with the run, so what is worth keeping of
it (its events, its dead letters) is written below the run's directory: one ``<topic>.jsonl``
per topic, one JSON line per record with its key, headers and value as published."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skillgym_core.bus.base import Delivery
from skillgym_core.bus.letters import decode_headers, encode_headers
from skillgym_core.errors import SkillGymError

LOG_SUFFIX = ".jsonl"
EVENT_LOG_DIR = "events"  # below an embedded run's directory: one ``<topic>.jsonl`` per main topic


class RecordLogError(SkillGymError):
    """A line of a record log is not a logged record."""

    reason = "unreadable_record_log"


def write_record_log(directory: Path, records: Iterable[Delivery], *, replaces: str = "*") -> None:
    """One file per topic of ``records``; files matching ``<replaces>.jsonl`` that an earlier run
    in the same directory left for topics not among them are removed."""
    by_topic: dict[str, list[Delivery]] = defaultdict(list)
    for delivery in records:
        by_topic[delivery.topic].append(delivery)
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob(f"{replaces}{LOG_SUFFIX}"):
        if stale.name.removesuffix(LOG_SUFFIX) not in by_topic:
            stale.unlink()
    # the in-memory bus keeps no record times: when the log was written stands in for a record's own
    logged_at = dt.datetime.now(dt.UTC).isoformat()
    for topic, deliveries in by_topic.items():
        lines = [json.dumps(_line(delivery, logged_at)) + "\n" for delivery in deliveries]
        (directory / f"{topic}{LOG_SUFFIX}").write_text("".join(lines))


def _line(delivery: Delivery, logged_at: str) -> dict[str, Any]:
    line: dict[str, Any] = {"partition": delivery.partition, "offset": delivery.offset, "key": delivery.key,
                            "logged_at": logged_at, "value_b64": base64.b64encode(delivery.value).decode()}  # fmt: skip
    if delivery.headers:
        line["headers_b64"] = encode_headers(delivery.headers)
    return line


def log_path(directory: Path, topic: str) -> Path:
    return directory / f"{topic}{LOG_SUFFIX}"


def read_record_log(directory: Path, topic: str) -> list[tuple[Delivery, object]]:
    """Every record logged for ``topic`` (none when there is no file) with when it was logged."""
    path = log_path(directory, topic)
    if not path.is_file():
        return []
    records: list[tuple[Delivery, object]] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            value = base64.b64decode(row["value_b64"])
            headers = decode_headers(row.get("headers_b64"))
            delivery = Delivery(topic, int(row["partition"]), int(row["offset"]), row.get("key"), value, headers)
        except (ValueError, KeyError, TypeError) as exc:
            raise RecordLogError(f"{path}:{number}: not a logged record", path=str(path), line=number) from exc
        records.append((delivery, row.get("logged_at")))
    return records
