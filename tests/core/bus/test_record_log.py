"""Record logs: an embedded run's records kept as JSON lines, headers and all, read back as
they were published."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.bus.base import Delivery
from skillgym_core.bus.record_log import RecordLogError, log_path, read_record_log, write_record_log


def test_records_round_trip_with_their_headers_one_file_per_topic(tmp_path: Path) -> None:
    records = [
        Delivery("a", 0, 0, "k1", b"\x00binary\xff", (("ce_id", b"1"), ("ce_id", b"\xfe"))),
        Delivery("b", 0, 0, None, b"{}"),
        Delivery("a", 0, 1, "k2", b"two"),
    ]
    write_record_log(tmp_path, records)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]
    back = [delivery for topic in ("a", "b") for delivery, _ in read_record_log(tmp_path, topic)]
    assert back == [records[0], records[2], records[1]]
    assert read_record_log(tmp_path, "missing") == []


def test_a_new_log_replaces_the_stale_files_it_covers_only(tmp_path: Path) -> None:
    write_record_log(tmp_path, [Delivery("a.dlq", 0, 0, None, b"x"), Delivery("b.dlq", 0, 0, None, b"y")], replaces="*.dlq")
    (tmp_path / "notes.jsonl").write_text("kept\n")
    write_record_log(tmp_path, [Delivery("a.dlq", 0, 0, None, b"z")], replaces="*.dlq")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.dlq.jsonl", "notes.jsonl"]
    assert [d.value for d, _ in read_record_log(tmp_path, "a.dlq")] == [b"z"]


def test_a_damaged_line_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    write_record_log(tmp_path, [Delivery("a", 0, 0, None, b"x")])
    log_path(tmp_path, "a").write_text(log_path(tmp_path, "a").read_text() + "{broken\n")
    with pytest.raises(RecordLogError) as caught:
        read_record_log(tmp_path, "a")
    assert caught.value.reason == "unreadable_record_log" and caught.value.details["line"] == 2
