"""The moment a program ran, stamped on its result ("Generated: 2026-12-07 10:08:10"), told from
the dates its data carries: a date, or a date and time, within a day of the moment the result is
read is the clock's, and is replaced by a mark. A build masks an expectation when it runs the
skill's tool; a verifier masks the agent's result when it reads it, shortly after the agent ran;
a reviewer compares two runs' outputs with their stamps masked.

Standard library only: this file is also shipped, as it is, to probes and verifiers in sandboxes."""

from __future__ import annotations

import datetime
import re

MARK = "<clock>"
WINDOW = datetime.timedelta(days=1, hours=1)
# A date, with the time of day, fractions and zone where given; or a compact 20261207T100810 stamp.
STAMP = re.compile(
    r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?:(?:T|[ \t]+)(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\d])"
    r"|(?<!\d)(\d{4})(\d{2})(\d{2})[T_-](\d{2})(\d{2})(\d{2})(?!\d)"
)


def _moment(match: re.Match[str]) -> datetime.datetime | None:
    parts = [g for g in match.groups() if g is not None]
    year, month, day, hour, minute, second = [*(int(p) for p in parts[:6]), 0, 0, 0][:6]
    try:
        return datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None


def mask(text: str, now: datetime.datetime | None = None) -> str:
    """``text`` with every stamp of a moment near ``now`` (by default the present, local or UTC)
    replaced by the mark."""
    nows = [now] if now else [datetime.datetime.now(), datetime.datetime.now(datetime.UTC).replace(tzinfo=None)]

    def replace(match: re.Match[str]) -> str:
        moment = _moment(match)
        if moment is not None and any(abs(moment - present) <= WINDOW for present in nows):
            return MARK
        return match.group(0)

    return STAMP.sub(replace, text)


def mask_bytes(data: bytes, now: datetime.datetime | None = None) -> bytes:
    """The same for UTF-8 text; other bytes come back as they were."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    masked = mask(text, now)
    return data if masked == text else masked.encode("utf-8")


def same_but_clock(got: bytes | None, want: bytes) -> bool:
    """Whether two runs' outputs are the same but for the moment each was made."""
    return got == want or (got is not None and mask_bytes(got) == mask_bytes(want))
