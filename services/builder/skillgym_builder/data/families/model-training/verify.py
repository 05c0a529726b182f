"""Verifier for model-training: the checkpoint run.json names is a Lightning checkpoint under
out/checkpoints (read with torch's weights-only loader, never unpickled freely); its weights,
loaded into the verifier's own copy of the network, classify rows only the verifier holds at
the required accuracy; its checkpoint callback monitored val_loss and calls it best, and the
run's CSV logs agree (its score is their lowest val_loss, at its epoch); the predictions are that
network's on the test rows."""

import csv
import glob
import itertools
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch
from checks import app_path, load_expected, read_json, run
from torch import nn

E = load_expected()
MAX_BYTES = 50 * 1024 * 1024
LIGHTNING_KEYS = {"epoch", "global_step", "pytorch-lightning_version", "state_dict", "callbacks"}
_cache = {}


def _safe_globals(path):
    """Types a Lightning checkpoint may hold besides tensors and containers: saved hyperparameters.
    Lightning is imported for them only when the checkpoint names one: its import takes seconds,
    and an allowance no global of the file uses changes nothing."""
    try:
        named = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # an older torch, or a file it cannot list: allow what it may need
        named = None
    if named is not None and not any(name.endswith(".AttributeDict") for name in named):
        return []
    allowed = []
    try:
        from lightning.fabric.utilities.data import AttributeDict
        allowed.append(AttributeDict)
    except ImportError:
        pass
    try:
        from lightning_fabric.utilities.data import AttributeDict as LegacyAttributeDict
        allowed.append(LegacyAttributeDict)
    except ImportError:
        pass
    return allowed


def checkpoint():
    if "checkpoint" not in _cache:
        rel = str(read_json("out/run.json")["best_checkpoint"]).strip()
        given = app_path(rel[len("/app/"):] if rel.startswith("/app/") else rel)
        path = os.path.realpath(given)
        root = os.path.realpath(app_path("out/checkpoints")) + os.sep
        if not path.startswith(root) or not os.path.isfile(path) or os.path.islink(given):
            raise ValueError(f"{rel} is not a checkpoint file under out/checkpoints")
        if os.path.getsize(path) > MAX_BYTES:
            raise ValueError("the checkpoint is too large for this network")
        with torch.serialization.safe_globals(_safe_globals(path)):
            data = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(data, dict) or not set(data) >= LIGHTNING_KEYS:
            raise ValueError("not a Lightning checkpoint")
        _cache["checkpoint"] = (path, data)
    return _cache["checkpoint"]


class Reference(nn.Module):
    """The network model.py defines, rebuilt from its layer sizes (state-dict names net.0, net.2, ...)."""

    def __init__(self, sizes):
        super().__init__()
        layers = []
        for index, (inputs, outputs) in enumerate(itertools.pairwise(sizes)):
            layers += [nn.Linear(inputs, outputs)] + ([nn.ReLU()] if index < len(sizes) - 2 else [])
        self.net = nn.Sequential(*layers)

    def forward(self, features):
        return self.net(features)


def network():
    """The verifier's own copy of the network with the checkpoint's weights (under any one
    attribute name)."""
    if "network" not in _cache:
        _, data = checkpoint()
        model = Reference([E["features"], *E["hidden"], E["classes"]])
        wanted = model.state_dict()
        weights = data["state_dict"]
        prefixes = {key[: -len(name)] for key in weights for name in wanted if key.endswith(name)}
        matching = [p for p in prefixes if all(p + name in weights for name in wanted)]
        if len(matching) != 1:
            raise ValueError(f"the checkpoint does not hold one copy of the network's weights ({len(matching)} found)")
        state = {name: weights[matching[0] + name] for name in wanted}
        if any(not isinstance(t, torch.Tensor) or t.shape != wanted[n].shape for n, t in state.items()):
            raise ValueError("the checkpoint's weights do not fit the network")
        model.load_state_dict(state)
        model.eval()
        _cache["network"] = model
    return _cache["network"]


def logits(rows):
    with torch.no_grad():
        return network()(torch.tensor(rows, dtype=torch.float32))


def classify(rows):
    return logits(rows).argmax(dim=1).tolist()


def acceptable_labels(rows):
    """Per row, the classes whose logit ties the top one (within float noise: another batch size
    may tip a tie); almost always the argmax alone."""
    out = []
    for row in logits(rows):
        top = float(row.max())
        out.append({k for k, value in enumerate(row.tolist()) if top - value <= 1e-4 * max(1.0, abs(top))})
    return out


def model():
    features = [x for x, _ in E["rows"]]
    labels = [y for _, y in E["rows"]]
    accuracy = sum(p == y for p, y in zip(classify(features), labels, strict=True)) / len(labels)
    print(f"accuracy on the verifier's rows: {accuracy:.3f} (required {E['threshold']})")
    return accuracy >= E["threshold"]


def _callback_state(data):
    states = [v for k, v in data["callbacks"].items() if str(k).startswith("ModelCheckpoint") and isinstance(v, dict)]
    if len(states) != 1:
        raise ValueError(f"{len(states)} checkpoint callbacks recorded; one is needed")
    return states[0]


def _score(value):
    value = float(value.item() if isinstance(value, torch.Tensor) else value)
    if not math.isfinite(value):
        raise ValueError("the best score is not a number")
    return value


def checkpoint_check():
    """The run's checkpoint callback monitored val_loss (lowest best) and calls this file best."""
    path, data = checkpoint()
    state = _callback_state(data)
    if state.get("monitor") != "val_loss":
        raise ValueError(f"the checkpoint callback monitored {state.get('monitor')!r}")
    if os.path.basename(str(state.get("best_model_path", ""))) != os.path.basename(path):
        raise ValueError("the checkpoint callback names another file best")
    best = _score(state["best_model_score"])
    scores = [_score(v) for v in (state.get("best_k_models") or {}).values()]
    return bool(scores) and best <= min(scores) + 1e-9


def _val_losses(metrics):
    losses = {}
    with open(metrics, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            value = (row.get("val_loss") or "").strip()
            if value:
                losses.setdefault(int(float(row["epoch"])), []).append(float(value))
    return losses


def logs():
    """A CSV log under out/logs with val_loss for every epoch up to the checkpoint's, whose lowest
    value is the checkpoint's score, logged at the checkpoint's epoch."""
    _, data = checkpoint()
    best, epoch = _score(_callback_state(data)["best_model_score"]), int(data["epoch"])
    for metrics in sorted(glob.glob(app_path("out/logs/**/*.csv"), recursive=True)):
        if os.path.islink(metrics):
            continue
        try:
            losses = _val_losses(metrics)
        except (ValueError, KeyError, TypeError):
            continue
        if not losses or set(range(epoch + 1)) - set(losses):
            continue
        lowest = min(v for values in losses.values() for v in values)
        if math.isclose(lowest, best, rel_tol=1e-5, abs_tol=1e-7) and any(
                math.isclose(v, best, rel_tol=1e-5, abs_tol=1e-7) for v in losses[epoch]):
            return True
    raise ValueError("no CSV log under out/logs records this checkpoint as the lowest val_loss")


def predictions():
    ids = [row_id for row_id, _ in E["test"]]
    allowed = dict(zip(ids, acceptable_labels([x for _, x in E["test"]]), strict=True))
    with open(app_path("out/predictions.csv"), newline="", encoding="utf-8") as handle:
        got = [(row["id"].strip(), int(row["label"])) for row in csv.DictReader(handle)]
    if sorted(i for i, _ in got) != sorted(ids):
        raise ValueError("predictions.csv does not hold each test row once")
    wrong = [i for i, label in got if label not in allowed[i]]
    if wrong:
        raise ValueError(f"{len(wrong)} predictions are not the checkpoint's, e.g. row {wrong[0]}")
    return True


run([("model", model), ("checkpoint", checkpoint_check), ("logs", logs), ("predictions", predictions)])
