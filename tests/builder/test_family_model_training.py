"""model-training: a given network trained with PyTorch Lightning on generated data; the verifier
reads the best checkpoint with torch's weights-only loader, measures its weights on hidden rows,
and checks the checkpoint callback's state and the CSV logs against each other."""

from __future__ import annotations

import csv
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.model_training import ModelTrainingFamily, centres, nearest_centre_accuracy, sample
from skillgym_builder.families.seeds import seed_card
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    read_json,
    rewrite_json,
    write_json,
)

KNOBS = {"record_count": 1500, "noise_level": 0.9, "distractor_files": 1, "error_recovery": 6}
DEEP_LEARNING = {"dependencies": {"declared": ["lightning", "torch"]}}


def lightning_skill() -> Any:
    return card_for("lightning-classifier", "deep-learning", category="data-science", runtime=DEEP_LEARNING)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    return build(ModelTrainingFamily(), lightning_skill(), KNOBS, tmp_path_factory.mktemp("training"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_fits_lightning_skills_and_refuses_others() -> None:
    family = ModelTrainingFamily()
    assert family.suitability(seed_card(family.spec)).fits
    fit = family.suitability(lightning_skill())
    assert fit.fits and fit.code == "subcategory" and "package:lightning" in fit.evidence
    unrelated = card_for("csv-cleanup", "editing-proofreading", category="writing")
    assert not family.suitability(unrelated).fits


def test_the_threshold_sits_below_what_the_true_centres_reach() -> None:
    rng = random.Random(3)
    means = centres(rng, 4, 8)
    rows = sample(rng, means, 0.9, 2000)
    assert 0.8 < nearest_centre_accuracy(rows, means) <= 1.0
    family = ModelTrainingFamily()
    params = family.instantiate(lightning_skill(), 0, KNOBS).params
    assert params["threshold"] <= params["best_possible"] - 0.069 and params["threshold"] > 1 / params["classes"] + 0.29


@pytest.mark.slow
def test_task_conforms_installs_lightning_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    requirements = (built.task.root / "environment" / "requirements.txt").read_text()
    assert "lightning>=2.2" in requirements and "torch>=2.2" in requirements
    usage = built.extra("skill_usage")
    assert usage["kind"] == "library" and "lightning" in usage["libraries"], usage
    outcome = built.untouched()
    assert not outcome.passed and outcome.reward == 0
    train = (built.task.root / "environment/workspace/data/train.csv").read_text()
    assert train.count("\nx0") == 6  # the malformed rows are there


@pytest.mark.slow
def test_reference_and_alternative_runs_pass(built: BuiltTask, solved: Path) -> None:
    outcome = built.verify(solved)
    assert outcome.passed, outcome
    assert list((solved / "out/checkpoints").glob("*.ckpt"))
    ok, alternative = built.solve("alternatives/datamodule-and-predict.sh")
    assert ok
    outcome = built.verify(alternative)
    assert outcome.passed, outcome


def _last_checkpoint_named(workspace: Path) -> None:
    """Hands over a checkpoint that is not the best: the callback names another file."""
    best = Path(read_json(workspace, "out/run.json")["best_checkpoint"])
    other = workspace / "out/checkpoints/final.ckpt"
    shutil.copy(workspace / best, other)
    import torch

    data = torch.load(other, weights_only=False)
    data["callbacks"] = {k: {**v, "best_model_path": "/app/out/checkpoints/elsewhere.ckpt"} if k.startswith("ModelCheckpoint") else v
                         for k, v in data["callbacks"].items()}
    torch.save(data, other)
    write_json(workspace, "out/run.json", {"best_checkpoint": "out/checkpoints/final.ckpt"})


def _plain_state_dict(workspace: Path) -> None:
    """torch.save(model.state_dict()): the weights without Lightning's run state."""
    import torch

    best = workspace / read_json(workspace, "out/run.json")["best_checkpoint"]
    torch.save(torch.load(best, weights_only=False)["state_dict"], best)


def _untrained_weights(workspace: Path) -> None:
    import torch

    best = workspace / read_json(workspace, "out/run.json")["best_checkpoint"]
    data = torch.load(best, weights_only=False)
    data["state_dict"] = {k: torch.randn_like(v) * 0.01 for k, v in data["state_dict"].items()}
    torch.save(data, best)


def _logs_removed(workspace: Path) -> None:
    shutil.rmtree(workspace / "out/logs")


def _logs_of_another_run(workspace: Path) -> None:
    for metrics in (workspace / "out/logs").rglob("metrics.csv"):
        rows = list(csv.DictReader(metrics.open()))
        for row in rows:
            if row.get("val_loss"):
                row["val_loss"] = str(float(row["val_loss"]) * 0.9)
        with metrics.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def _predictions_all_zero(workspace: Path) -> None:
    path = workspace / "out/predictions.csv"
    rows = list(csv.DictReader(path.open()))
    path.write_text("id,label\n" + "".join(f"{r['id']},0\n" for r in rows))


def _one_prediction_changed(workspace: Path) -> None:
    path = workspace / "out/predictions.csv"
    rows = list(csv.DictReader(path.open()))
    rows[len(rows) // 2]["label"] = str((int(rows[len(rows) // 2]["label"]) + 1) % 3)
    path.write_text("id,label\n" + "".join(f"{r['id']},{r['label']}\n" for r in rows))


def _a_pickle_that_runs_code(workspace: Path) -> None:
    """A checkpoint that would run code when unpickled freely: the weights-only loader refuses it."""
    import pickle

    best = workspace / read_json(workspace, "out/run.json")["best_checkpoint"]

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (print, ("pwned",))

    best.write_bytes(pickle.dumps({"state_dict": Payload()}))


def _outside_checkpoints(workspace: Path) -> None:
    best = read_json(workspace, "out/run.json")["best_checkpoint"]
    shutil.copy(workspace / best, workspace / "out/model.ckpt")
    write_json(workspace, "out/run.json", {"best_checkpoint": "out/model.ckpt"})


@pytest.mark.slow
@pytest.mark.parametrize(("name", "edit", "failing"), [
    ("a checkpoint the callback does not call best", _last_checkpoint_named, "checkpoint"),
    ("a bare state dict instead of a Lightning checkpoint", _plain_state_dict, "model"),
    ("untrained weights", _untrained_weights, "model"),
    ("no CSV logs", _logs_removed, "logs"),
    ("logs of another run", _logs_of_another_run, "logs"),
    ("every prediction the same class", _predictions_all_zero, "predictions"),
    ("one prediction changed", _one_prediction_changed, "predictions"),
    ("a pickle that runs code", _a_pickle_that_runs_code, "model"),
    ("a checkpoint outside out/checkpoints", _outside_checkpoints, "checkpoint"),
    ("run.json naming the stale run's summary", rewrite_json(
        "out/run.json", lambda v: v.update(best_checkpoint="runs/last-week/run.json")), "model"),
])
def test_wrong_but_plausible_runs_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any,
                                               failing: str) -> None:
    outcome = built.verify_edited(solved, edit)
    assert not outcome.passed, name
    assert outcome.rewards[failing] == 0, (name, outcome.rewards)


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "model-training")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "model-training")
