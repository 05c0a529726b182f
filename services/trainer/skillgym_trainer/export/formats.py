"""Dataset files in the formats training stacks read.

- ``chat``: OpenAI chat JSONL (``messages`` with ``tool_calls`` and ``role: tool``, ``tools``)
- ``sharegpt``: ``conversations`` of ``{from, value}`` (system/human/gpt/tool), tool calls as
  ``<tool_call>`` blocks in the gpt value (Hermes style), ``tools`` as a JSON string
- ``swift``: ms-swift agent format (``tool_call`` / ``tool_response`` roles, ``tools`` string)
- ``hf``: a ``datasets.DatasetDict`` saved with ``save_to_disk``
- ``atif``: the source ATIF trajectories, unchanged

Every format keeps each record's ``source`` (``reference`` or ``model``), and no file is written
when a record names a hidden path (:mod:`.guard`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from skillgym_core.store.base import Store

from skillgym_trainer.errors import DatasetError
from skillgym_trainer.export.guard import check_record, check_rows

Rows = Sequence[dict[str, Any]]


def _assistant_text(message: dict[str, Any]) -> str:
    text = ""
    if message.get("reasoning_content"):
        text += f"<think>\n{message['reasoning_content']}\n</think>\n"
    text += message.get("content") or ""
    for call in message.get("tool_calls") or []:
        arguments = json.loads(call["function"]["arguments"])
        payload = json.dumps({"name": call["function"]["name"], "arguments": arguments}, ensure_ascii=False)
        text += f"\n<tool_call>\n{payload}\n</tool_call>"
    return text


def to_sharegpt(example: dict[str, Any]) -> dict[str, Any]:
    names = {"system": "system", "user": "human", "assistant": "gpt", "tool": "tool"}
    conversations = []
    for message in example["messages"]:
        value = _assistant_text(message) if message["role"] == "assistant" else message.get("content") or ""
        conversations.append({"from": names[message["role"]], "value": value})
    row = {"conversations": conversations, "tools": json.dumps(example.get("tools") or [], ensure_ascii=False)}
    return _with_source(row, example)


def _with_source(row: dict[str, Any], example: dict[str, Any]) -> dict[str, Any]:
    return {**row, "source": example["source"]} if "source" in example else row


def to_swift(example: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, str]] = []
    for message in example["messages"]:
        role = message["role"]
        if role == "assistant":
            text = ""
            if message.get("reasoning_content"):
                text += f"<think>\n{message['reasoning_content']}\n</think>\n"
            text += message.get("content") or ""
            if text or not message.get("tool_calls"):
                messages.append({"role": "assistant", "content": text})
            for call in message.get("tool_calls") or []:
                payload = {"name": call["function"]["name"], "arguments": json.loads(call["function"]["arguments"])}
                messages.append({"role": "tool_call", "content": json.dumps(payload, ensure_ascii=False)})
        elif role == "tool":
            messages.append({"role": "tool_response", "content": message.get("content") or ""})
        else:
            messages.append({"role": role, "content": message.get("content") or ""})
    return _with_source({"tools": json.dumps(example.get("tools") or [], ensure_ascii=False), "messages": messages}, example)


def _write_jsonl(path: Path, rows: Rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


class Exporter(Protocol):
    def __call__(
        self, splits: Mapping[str, Rows], atif_keys: Mapping[str, Sequence[str]], out: Path, store: Store | None
    ) -> list[Path]: ...


def _jsonl_exporter(name: str, convert: Callable[[dict[str, Any]], dict[str, Any]]) -> Exporter:
    def export(
        splits: Mapping[str, Rows], atif_keys: Mapping[str, Sequence[str]], out: Path, store: Store | None
    ) -> list[Path]:
        paths = []
        for split, rows in splits.items():
            path = out / name / f"{split}.jsonl"
            _write_jsonl(path, [convert(row) for row in rows])
            paths.append(path)
        return paths

    return export


def _hf_row(example: dict[str, Any]) -> dict[str, Any]:
    messages = []
    for message in example["messages"]:
        messages.append(
            {
                "role": message["role"],
                "content": message.get("content") or "",
                "reasoning_content": message.get("reasoning_content"),
                "tool_call_id": message.get("tool_call_id"),
                "weight": message.get("weight", 1) if message["role"] == "assistant" else None,
                "tool_calls": message.get("tool_calls"),
            }
        )
    return _with_source({"messages": messages, "tools": json.dumps(example.get("tools") or [], ensure_ascii=False)}, example)


def export_hf(
    splits: Mapping[str, Rows], atif_keys: Mapping[str, Sequence[str]], out: Path, store: Store | None
) -> list[Path]:
    from datasets import Dataset, DatasetDict

    target = out / "hf"
    DatasetDict(
        {split: Dataset.from_list([_hf_row(row) for row in rows]) for split, rows in splits.items() if rows}
    ).save_to_disk(str(target))
    return [target]


def export_atif(
    splits: Mapping[str, Rows], atif_keys: Mapping[str, Sequence[str]], out: Path, store: Store | None
) -> list[Path]:
    if store is None:
        raise DatasetError("the atif export copies trajectories from the store; none was given")
    paths = []
    for split, key_list in atif_keys.items():
        for key in dict.fromkeys(key_list):
            data = store.get_bytes(key)
            check_record(key, json.loads(data))
            path = out / "atif" / split / f"{key.split('/')[-2]}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            paths.append(path)
    return paths


EXPORTERS: dict[str, Exporter] = {
    "chat": _jsonl_exporter("chat", lambda row: row),
    "sharegpt": _jsonl_exporter("sharegpt", to_sharegpt),
    "swift": _jsonl_exporter("swift", to_swift),
    "hf": export_hf,
    "atif": export_atif,
}


def export_splits(
    splits: Mapping[str, Rows],
    out: Path,
    formats: Sequence[str],
    *,
    atif_keys: Mapping[str, Sequence[str]] | None = None,
    store: Store | None = None,
) -> dict[str, list[Path]]:
    unknown = sorted(set(formats) - EXPORTERS.keys())
    if unknown:
        raise DatasetError(f"unknown export formats {unknown}; known: {sorted(EXPORTERS)}", formats=unknown)
    check_rows(splits)
    return {name: EXPORTERS[name](splits, atif_keys or {}, Path(out), store) for name in formats}
