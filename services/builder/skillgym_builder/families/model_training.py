"""ai/ml: train a given network with the skill's training framework (PyTorch Lightning) on
generated tabular data, keeping the best checkpoint by validation loss, CSV logs and predictions.
The verifier loads the checkpoint's weights into its own copy of the network and measures
accuracy on fresh rows it alone holds, and checks that the checkpoint is the one the run's own
logs and checkpoint callback call best. Harder levels add rows, overlap between the classes,
malformed rows and a stale run's logs and summary nearby."""

from __future__ import annotations

import json
import math
import random

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "model-training"
HIDDEN_ROWS = 600
HIDDEN_LAYERS = [32, 32]  # model.py's Classifier, which the verifier rebuilds from these sizes
# what a trained network must reach on fresh rows, below the nearest-centre rule's own accuracy
MARGIN = 0.07
MALFORMED = ["", "n/a", "nan", "1e999", "--"]


def centres(rng: random.Random, classes: int, features: int) -> list[list[float]]:
    """Class centres at least 2.2 apart, so the classes are learnable and not trivially so."""
    chosen: list[list[float]] = []
    while len(chosen) < classes:
        centre = [round(rng.uniform(-2.0, 2.0), 3) for _ in range(features)]
        if all(math.dist(centre, other) >= 2.2 for other in chosen):
            chosen.append(centre)
    return chosen


def sample(rng: random.Random, means: list[list[float]], spread: float, count: int) -> list[tuple[list[float], int]]:
    rows = []
    for _ in range(count):
        label = rng.randrange(len(means))
        rows.append(([round(rng.gauss(m, spread), 5) for m in means[label]], label))
    return rows


def nearest_centre_accuracy(rows: list[tuple[list[float], int]], means: list[list[float]]) -> float:
    """The accuracy of the rule that knows the true centres: about the best any model can do."""
    hits = sum(min(range(len(means)), key=lambda k: math.dist(x, means[k])) == y for x, y in rows)
    return hits / len(rows)


def table(rows: list[tuple[list[float], int]], start: int, labelled: bool) -> tuple[str, list[str]]:
    width = len(rows[0][0])
    header = ["id", *(f"f{i}" for i in range(width)), *(["label"] if labelled else [])]
    ids = [f"r{start + n:05d}" for n in range(len(rows))]
    lines = [",".join(header)]
    for row_id, (features, label) in zip(ids, rows, strict=True):
        lines.append(",".join([row_id, *(repr(v) for v in features), *([str(label)] if labelled else [])]))
    return "\n".join(lines) + "\n", ids


def corrupt(text: str, rng: random.Random, count: int, classes: int) -> str:
    """``count`` extra rows that do not parse as data: blank or non-numeric fields, infinities,
    labels out of range."""
    lines = text.rstrip("\n").split("\n")
    width = len(lines[0].split(","))
    for n in range(count):
        fields = [f"x{n:04d}", *(repr(round(rng.uniform(-2, 2), 5)) for _ in range(width - 2)), "0"]
        if n % 3 == 2:
            fields[-1] = str(classes + rng.randint(0, 5))
        else:
            fields[1 + rng.randrange(width - 2)] = rng.choice(MALFORMED)
        lines.insert(rng.randint(1, len(lines)), ",".join(fields))
    return "\n".join(lines) + "\n"


class ModelTrainingFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        classes, features = rng.randint(3, 5), rng.randint(6, 10)
        spread = float(values["noise_level"])
        means = centres(rng, classes, features)
        total = int(values["record_count"])
        train, val = sample(rng, means, spread, total), sample(rng, means, spread, max(150, total // 4))
        test, hidden = sample(rng, means, spread, 200), sample(rng, means, spread, HIDDEN_ROWS)
        best_possible = nearest_centre_accuracy(hidden, means)
        threshold = round(max(1 / classes + 0.3, best_possible - MARGIN), 3)
        train_csv, _ = table(train, 0, labelled=True)
        if values["error_recovery"]:
            train_csv = corrupt(train_csv, rng, int(values["error_recovery"]), classes)
        val_csv, _ = table(val, len(train), labelled=True)
        test_csv, test_ids = table(test, len(train) + len(val), labelled=False)
        workspace = {"model.py": source(FAMILY_ID, "model.py").encode(), "data/train.csv": train_csv.encode(),
                     "data/val.csv": val_csv.encode(), "data/test.csv": test_csv.encode()}
        if values["distractor_files"]:
            workspace.update(_stale_run(rng, classes, features))
        expected = {
            "classes": classes, "features": features, "threshold": threshold,
            "hidden": HIDDEN_LAYERS, "rows": [[x, y] for x, y in hidden], "test": [[i, x] for i, (x, _) in zip(test_ids, test, strict=True)],
        }
        items = rubric(self.spec, ["model", "checkpoint", "logs", "predictions"])
        argument = json.dumps({"classes": classes})
        solve = agent_solution(card, inspect=["sed -n '1,3p' data/train.csv", "cat model.py"],
                               script=source(FAMILY_ID, "solve_lightning.py"), name="train.py",
                               run=f"python3 /tmp/work/train.py '{argument}'")
        alternative = agent_solution(card, inspect=["wc -l data/*.csv"], script=source(FAMILY_ID, "solve_datamodule.py"),
                                     name="train.py", run=f"python3 /tmp/work/train.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        claim = SkillClaim(claimed=False, reason="the task needs the skill's library, which the instruction names; "
                                                 "how it checkpoints, logs and restores is what the skill teaches")
        return TemplateOutput(
            instruction=_instruction(classes, len(test), threshold, bool(values["distractor_files"])),
            workspace=workspace,
            protected=sorted(workspace),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"datamodule-and-predict": alternative},
            blueprint=self.spec.blueprint,
            params={"classes": classes, "features": features, "train_rows": total, "threshold": threshold,
                    "best_possible": round(best_possible, 3)},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _stale_run(rng: random.Random, classes: int, features: int) -> dict[str, bytes]:
    """Last week's run on other data: its logs and a summary that looks like a result. Copying
    its numbers or its predictions scores nothing."""
    losses = sorted((round(rng.uniform(0.2, 0.9), 4) for _ in range(6)), reverse=True)
    metrics = "epoch,step,val_loss,val_acc\n" + "".join(
        f"{e},{(e + 1) * 20 - 1},{loss},{round(1 - loss / 2, 4)}\n" for e, loss in enumerate(losses))
    summary = {"best_checkpoint": f"runs/last-week/checkpoints/epoch=5-val_loss={losses[-1]:.4f}.ckpt",
               "classes": classes, "features": features, "val_acc": round(1 - losses[-1] / 2, 4)}
    return {"runs/last-week/logs/metrics.csv": metrics.encode(),
            "runs/last-week/run.json": (json.dumps(summary, indent=2) + "\n").encode()}


def _instruction(classes: int, tests: int, threshold: float, stale: bool) -> str:
    stale_note = " `/app/runs/` holds an older run on other data." if stale else ""
    return f"""# Train the classifier

`/app/data/train.csv` and `/app/data/val.csv` hold labelled rows (an `id`, feature columns `f0`, `f1`, ...
and a `label` from 0 to {classes - 1}); `/app/data/test.csv` holds {tests} rows to classify.{stale_note}
`/app/model.py` defines the network, `Classifier(n_features, n_classes)`, applied to the feature columns
as they are, in file order. Keep that file as it is.

Train the network with PyTorch Lightning, on CPU, so that:

1. the validation loss is logged as `val_loss` every epoch, and the run's logs are CSV files under
   `/app/out/logs/`;
2. checkpoints are kept under `/app/out/checkpoints/`, and the best one by `val_loss` is known to the run;
3. `/app/out/run.json` is `{{"best_checkpoint": "<that checkpoint's path, relative to /app>"}}`;
4. `/app/out/predictions.csv` (`id,label`, one row per test row) holds the best checkpoint's predictions.

The weights in that checkpoint must classify fresh rows from the same source with at least
{threshold:.1%} accuracy. Rows that are not valid data are not training data.
"""
