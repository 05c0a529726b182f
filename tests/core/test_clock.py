"""Stamps of the moment a program ran are masked; dates a program's data carries are not."""

from __future__ import annotations

import datetime

from skillgym_core.clock import mask, mask_bytes, same_but_clock

NOW = datetime.datetime(2026, 12, 7, 10, 8, 10)


def test_only_stamps_of_the_present_moment_are_masked() -> None:
    text = f"at {NOW:%Y-%m-%d %H:%M:%S} on {NOW:%Y-%m-%d} ({NOW:%Y%m%dT%H%M%S}); data from 2024-03-04 and 2024-03-04T08:00"
    assert mask(text, NOW) == "at <clock> on <clock> (<clock>); data from 2024-03-04 and 2024-03-04T08:00"
    assert mask("2026-12-09 10:00", NOW) == "2026-12-09 10:00"  # two days on: a date of the data
    assert mask("2026-12-07T10:08:10.123456+00:00 and 2026-12-07  10:08", NOW) == "<clock> and <clock>"
    assert mask("2026-13-45 is no date", NOW) == "2026-13-45 is no date"


def test_bytes_without_a_stamp_come_back_as_they_were() -> None:
    assert mask_bytes(b"no stamp \xff", NOW) == b"no stamp \xff"
    assert mask_bytes(f"made {NOW:%Y-%m-%d}".encode(), NOW) == b"made <clock>"


def test_the_present_is_masked_by_default() -> None:
    assert mask(f"{datetime.datetime.now():%Y-%m-%d %H:%M}") == "<clock>"


def test_two_runs_differ_only_in_their_stamps() -> None:
    earlier = datetime.datetime.now() - datetime.timedelta(seconds=3)
    assert same_but_clock(f"made {datetime.datetime.now():%Y-%m-%d %H:%M:%S} n=3".encode(),
                          f"made {earlier:%Y-%m-%d %H:%M:%S} n=3".encode())
    assert not same_but_clock(f"made {earlier:%Y-%m-%d %H:%M:%S} n=4".encode(), f"made {earlier:%Y-%m-%d %H:%M:%S} n=3".encode())
    assert not same_but_clock(None, b"n=3")
