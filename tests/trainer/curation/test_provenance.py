"""Hidden paths never reach a dataset; reference demonstrations are labelled, counted and optional."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core import keys
from skillgym_core.contracts.atif import ObservationResult, Step, ToolCall
from skillgym_core.hidden_paths import hidden_paths_in, hidden_paths_in_text
from skillgym_core.provenance import with_source
from skillgym_core.store.local import LocalStore
from skillgym_trainer.commands import export_command
from skillgym_trainer.errors import HiddenPathError
from skillgym_trainer.export.formats import export_splits
from skillgym_trainer.service import TrainerService
from skillgym_trainer.settings import TrainerSettings

from tests.trainer.factories import envelope, make_context, make_trajectory, store_trajectory

HARNESSES = ("oracle", "nop", "builtin", "mini-swe-agent", "claude-code", "codex")
FORMATS = ["chat", "sharegpt", "swift", "hf", "atif"]
LEAKS = ["python3 /solution/repair.py", "cat /tests/test_outputs.py", "cat /logs/verifier/reward.txt"]


def _leak(store: LocalStore, trajectory_id: str, command: str) -> None:
    """Rewrite a stored trajectory so that one agent step runs ``command``."""
    key = keys.trajectory_atif(trajectory_id)
    trajectory = make_trajectory(int(trajectory_id.split("-")[1]), trajectory_id=trajectory_id)
    call = ToolCall(tool_call_id="leak", function_name="bash", arguments={"command": command})
    steps = [*trajectory.steps[:-1], Step(
        step_id=len(trajectory.steps), source="agent", message="Looking around.", tool_calls=[call],
        observation={"results": [ObservationResult(source_call_id="leak", content="ok")]},
    )]  # fmt: skip
    store.put_bytes(key, trajectory.model_copy(update={"steps": steps}).model_dump_json(exclude_none=True).encode())


def _populate(store: LocalStore) -> dict[str, str]:
    """Per harness: two clean runs and one that names a hidden path; returns id -> harness."""
    harness_of = {}
    index = 0
    for harness in HARNESSES:
        for kind in ("clean", "clean", "leak"):
            event = store_trajectory(store, index, harness=harness, model="m")
            if kind == "leak":
                _leak(store, event.trajectory_id, LEAKS[(index // 3) % len(LEAKS)])
            harness_of[event.trajectory_id] = harness
            index += 1
    return harness_of


def test_hidden_path_matching() -> None:
    assert hidden_paths_in_text("python3 /solution/x.py; cat /tests/a /logs/verifier/r") == {
        "/solution", "/tests", "/logs/verifier",
    }  # fmt: skip
    for harmless in ("/app/tests/test_a.py", "./tests", "pytest tests/", "/testsuite", "/solutions/a", "~/tests"):
        assert hidden_paths_in_text(harmless) == set(), harmless
    assert hidden_paths_in({"arguments": json.dumps({"command": "ls\n/tests"})}) == ["/tests"]


def test_no_export_format_of_any_harness_names_a_hidden_path(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    harness_of = _populate(store)
    dataset = export_command(store, tmp_path / "out", formats=FORMATS, near_dup_threshold=None, eval_fraction=0.2)
    card = dataset.card
    leaked = {tid for tid, h in harness_of.items() if int(tid.split("-")[1]) % 3 == 2}
    assert card["pipeline"]["filtered"]["hidden_path_reference"] == len(HARNESSES)
    assert set(card["pipeline"]["hidden_path_reference"]["trajectory_ids"]) == leaked
    assert card["pipeline"]["hidden_path_reference"]["paths"] == {"/logs/verifier": 2, "/solution": 2, "/tests": 2}
    chosen = set(card["examples"]["train"]) | set(card["examples"]["eval"])
    assert chosen == set(harness_of) - leaked and {harness_of[t] for t in chosen} == set(HARNESSES)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert {p.relative_to(tmp_path / "out").parts[0] for p in files} >= set(FORMATS)
    for path in files:  # the card reports the rejected paths; the examples never name one
        if path.suffix in (".json", ".jsonl") and path.relative_to(tmp_path / "out").parts[0] in FORMATS:
            assert hidden_paths_in_text(path.read_text()) == set(), path
    from datasets import load_from_disk

    hf = load_from_disk(str(tmp_path / "out" / "hf"))
    for split in hf:
        assert all(hidden_paths_in(row) == [] for row in hf[split])
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "hidden_path_reference" in readme and "## Sources" in readme


def test_reference_demonstrations_are_labelled_shared_and_optional(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    _populate(store)
    # one reference run carries its label in the trajectory itself
    key = keys.trajectory_atif("traj-0000")
    from skillgym_core.contracts.atif import Trajectory

    labelled = with_source(Trajectory.model_validate_json(store.get_bytes(key)), "reference")
    store.put_bytes(key, labelled.model_dump_json(exclude_none=True).encode())

    both = export_command(store, tmp_path / "both", formats=["chat", "sharegpt", "swift", "hf"],
                          near_dup_threshold=None, eval_fraction=0.0)  # fmt: skip
    assert both.card["sources"] == {
        "reference": {"examples": 4, "share": round(4 / 12, 4)},
        "model": {"examples": 8, "share": round(8 / 12, 4)},
    }
    assert both.card["splits"]["train"]["sources"] == {"model": 8, "reference": 4}
    for fmt in ("chat", "sharegpt", "swift"):
        rows = [json.loads(line) for line in (tmp_path / "both" / fmt / "train.jsonl").read_text().splitlines()]
        assert sorted(r["source"] for r in rows) == ["model"] * 8 + ["reference"] * 4, fmt
    from datasets import load_from_disk

    assert sorted(load_from_disk(str(tmp_path / "both" / "hf"))["train"]["source"]).count("reference") == 4
    assert "| reference | 4 | 0 | 33.3% |" in (tmp_path / "both" / "README.md").read_text()

    models = export_command(store, tmp_path / "models", filters={"sources": ["model"]}, near_dup_threshold=None,
                            eval_fraction=0.0)  # fmt: skip
    assert models.card["sources"]["reference"] == {"examples": 0, "share": 0.0}
    assert models.card["pipeline"]["filtered"]["source_excluded"] == 4


def test_export_refuses_rows_that_name_hidden_paths(tmp_path: Path) -> None:
    row = {"messages": [{"role": "assistant", "content": "run /solution/solve.sh"}], "tools": []}
    for fmt in FORMATS[:4]:
        with pytest.raises(HiddenPathError) as error:
            export_splits({"train": [row]}, tmp_path / fmt, [fmt])
        assert error.value.reason == "hidden_path_reference"
        assert not (tmp_path / fmt).exists()


def test_service_skips_hidden_paths_and_reference_runs_when_asked(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    store = ctx.store
    assert isinstance(store, LocalStore)
    clean = store_trajectory(store, 0, harness="builtin")
    reference = store_trajectory(store, 1, harness="oracle")
    leaking = store_trajectory(store, 2, harness="builtin")
    _leak(store, leaking.trajectory_id, "bash /solution/solve.sh")

    service = TrainerService(ctx, TrainerSettings(include_reference=False))
    for event in (clean, reference, leaking):
        assert service.handle(envelope(event)) == []
    assert service.recorded_ids() == [clean.trajectory_id]
    rejected = json.loads(store.get_bytes(f"state/trainer/rejected/{leaking.trajectory_id}.json"))
    assert rejected["reason"] == "hidden_path_reference" and rejected["paths"] == ["/solution"]

    service = TrainerService(ctx, TrainerSettings())
    service.handle(envelope(reference))
    examples = {tid: json.loads(store.get_bytes(f"state/trainer/examples/{tid}.json")) for tid in service.recorded_ids()}
    assert {tid: e["example"]["source"] for tid, e in examples.items()} == {
        clean.trajectory_id: "model", reference.trajectory_id: "reference",
    }  # fmt: skip
