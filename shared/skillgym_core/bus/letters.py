"""The dead letter a consumer writes to ``<topic>.dlq`` for an event it gives up on: a JSON
object naming who gave up, after how many attempts and why, holding the original record (its
value and headers, base64) so that the event can be read and replayed as it was published."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from skillgym_core.bus.base import Delivery, Headers


def encode_headers(headers: Headers) -> list[list[str]]:
    return [[name, base64.b64encode(value).decode()] for name, value in headers]


def decode_headers(encoded: object) -> Headers:
    """Headers from :func:`encode_headers`; none from anything else (letters are read tolerantly)."""
    if not isinstance(encoded, list):
        return ()
    headers: list[tuple[str, bytes]] = []
    for pair in encoded:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)):
            return ()
        try:
            headers.append((pair[0], base64.b64decode(pair[1], validate=True)))
        except (binascii.Error, ValueError):
            return ()
    return tuple(headers)


def dead_letter(service: str, delivery: Delivery, attempts: int, error: dict[str, Any]) -> dict[str, Any]:
    letter: dict[str, Any] = {
        "service": service,
        "topic": delivery.topic,
        "partition": delivery.partition,
        "offset": delivery.offset,
        "key": delivery.key,
        "attempts": attempts,
        "error": error,
        "value_b64": base64.b64encode(delivery.value).decode(),
    }
    if delivery.headers:
        letter["headers_b64"] = encode_headers(delivery.headers)
    return letter
