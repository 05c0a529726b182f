from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.store.local import LocalStore
from skillgym_trainer.curation.build import CurationConfig, build_dataset
from skillgym_trainer.errors import DatasetError
from skillgym_trainer.export import atif_to_chat
from skillgym_trainer.export.formats import export_splits, to_sharegpt, to_swift

from tests.trainer.factories import make_trajectory, populate


def test_sharegpt_keeps_calls_and_observations() -> None:
    row = to_sharegpt(atif_to_chat(make_trajectory(2)))
    froms = [turn["from"] for turn in row["conversations"]]
    assert froms == ["system", "human", "gpt", "tool", "gpt", "tool", "gpt"]
    gpt = row["conversations"][2]["value"]
    assert gpt.startswith("<think>\n") and "<tool_call>\n" in gpt
    call = json.loads(gpt.split("<tool_call>\n")[1].split("\n</tool_call>")[0])
    assert call["name"] == "bash" and "command" in call["arguments"]
    assert json.loads(row["tools"])[0]["function"]["name"] == "bash"


def test_swift_agent_format() -> None:
    row = to_swift(atif_to_chat(make_trajectory(2)))
    roles = [m["role"] for m in row["messages"]]
    assert roles == [
        "system", "user", "assistant", "tool_call", "tool_response",
        "assistant", "tool_call", "tool_response", "assistant",
    ]  # fmt: skip
    call = json.loads(row["messages"][3]["content"])
    assert call["name"] == "bash" and isinstance(call["arguments"], dict)
    assert isinstance(row["tools"], str)


def test_unknown_format_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError):
        export_splits({"train": []}, tmp_path, ["parquet-ish"])


def test_build_dataset_versions_card_and_all_formats(tmp_path: Path) -> None:
    from datasets import load_from_disk

    store = LocalStore(tmp_path / "store")
    populate(store)
    config = CurationConfig(
        name="demo", eval_fraction=0.3, near_dup_threshold=0.8, formats=["chat", "sharegpt", "swift", "hf", "atif"]
    )
    out = tmp_path / "out"
    published = build_dataset(store, config, out=out)
    assert published.version == 1
    card = json.loads(store.get_bytes(published.key("card.json")))
    train_ids, eval_ids = card["examples"]["train"], card["examples"]["eval"]
    assert len(train_ids) + len(eval_ids) == 12
    assert card["splits"]["train"]["examples"] == len(train_ids)
    assert card["train_skills"] and not set(card["train_skills"]) & set(card["eval_skills"])  # split by skill
    assert "# Dataset demo v1" in store.get_bytes(published.key("README.md")).decode()
    for name in ("chat", "sharegpt", "swift"):
        lines = store.get_bytes(published.key(f"{name}/train.jsonl")).decode().splitlines()
        assert len(lines) == len(train_ids)
    hf = load_from_disk(str(out / "hf"))
    assert hf["train"].num_rows == len(train_ids) and hf["eval"].num_rows == len(eval_ids)
    assert hf["train"][0]["messages"][2]["tool_calls"][0]["function"]["name"] == "bash"
    assert sorted(p.stem for p in (out / "atif" / "eval").glob("*.json")) == sorted(eval_ids)

    again = build_dataset(store, config)
    assert (again.dataset_id, again.version) == (published.dataset_id, 1)
    other = build_dataset(store, config.model_copy(update={"max_per_task": 1, "formats": ["chat"]}))
    assert other.version == 2 and other.dataset_id != published.dataset_id
