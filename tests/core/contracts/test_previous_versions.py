"""Records written by earlier producers (a committed fixture: the envelope JSON published before
CloudEvents, and v1 CloudEvents in both modes, some from before optional fields were added) are
read by the current code, and their data is valid against the published schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skillgym_core.bus.base import Delivery
from skillgym_core.bus.memory import MemoryBus
from skillgym_core.contracts import topics
from skillgym_core.contracts.cloudevents import read_event, record_mode, to_structured
from skillgym_core.contracts.events import EnvBuilt, EnvReviewed
from skillgym_core.contracts.schemas import load_schemas, published_dir, validator_for
from skillgym_core.service import Worker
from skillgym_core.store.local import LocalStore

from tests.core.test_worker import PackageBuilder

FIXTURE = Path(__file__).parent / "fixtures" / "v1-records.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def delivery(row: dict[str, Any], offset: int = 0) -> Delivery:
    headers = tuple((name, value.encode()) for name, value in row["headers"])
    return Delivery(row["topic"], 0, offset, row["key"], row["value"].encode(), headers)


def test_the_fixture_covers_every_topic_in_every_format() -> None:
    assert {(row["topic"], row["format"]) for row in ROWS} == {
        (topic, form) for topic in topics.ALL_TOPICS for form in ("envelope", "binary", "structured")
    }


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['topic']}-{r['format']}")
def test_each_record_is_read_and_its_data_validates(row: dict[str, Any]) -> None:
    record = delivery(row)
    assert record_mode(record.headers) == row["format"]
    event = read_event(record)
    assert (event.type, event.key, event.correlation_id) == (row["topic"], row["key"], "run-2025-06-01")
    structured = to_structured(event)
    assert validator_for(load_schemas(published_dir()))(structured["dataschema"], structured["data"]) == []


def test_the_same_event_in_three_formats_is_one_event() -> None:
    by_id: dict[str, set[str]] = {}
    for row in ROWS:
        by_id.setdefault(read_event(delivery(row)).model_dump_json(), set()).add(row["format"])
    complete = [formats for formats in by_id.values() if formats == {"envelope", "binary", "structured"}]
    assert len(complete) == len(topics.ALL_TOPICS)


def test_fields_added_later_take_their_defaults_in_early_records() -> None:
    early_built, early_reviewed = ROWS[-2], ROWS[-1]  # written before the optional fields existed
    assert "revision" not in json.loads(early_built["value"])
    assert "revision" not in json.loads(early_reviewed["value"])["data"]
    built = read_event(delivery(early_built)).payload_as(EnvBuilt)
    assert (built.revision, built.parent_task_id, built.builder) == (0, None, "template")
    reviewed = read_event(delivery(early_reviewed)).payload_as(EnvReviewed)
    assert (reviewed.reasons, reviewed.report_key, reviewed.revision, reviewed.failure_type) == ([], None, 0, None)


def test_a_worker_handles_every_format_from_the_fixture(tmp_path: Path) -> None:
    bus, store = MemoryBus(), LocalStore(tmp_path / "store")
    for row in ROWS:
        if row["topic"] == topics.SKILL_INGESTED:
            record = delivery(row)
            bus.publish(record.topic, record.key, record.value, record.headers)
    worker = Worker(PackageBuilder(store), bus, store, group="g")
    worker.run_once(timeout_s=0)
    assert worker.stats.dead_lettered == 0
    assert worker.stats.consumed == 3 and worker.stats.duplicates == 2
