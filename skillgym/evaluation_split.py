"""What an evaluation may run on, and what it concludes: the held-out skills of the dataset a
student was trained on (a training skill never enters its evaluation), and the paired tables with
McNemar's exact p between models (same tasks, same harness) and between with and without the skill."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from skillgym_core.errors import SkillGymError
from skillgym_validator.contrast import mcnemar_exact


class EvaluationError(SkillGymError):
    reason = "evaluation"


def train_skills(dataset: Path) -> set[str]:
    """The skills whose examples the dataset trains on (its card's ``train_skills``)."""
    card_path = dataset / "card.json" if dataset.is_dir() else dataset
    if not card_path.is_file():
        raise EvaluationError(f"no dataset card at {card_path}", reason="dataset_not_found", path=str(card_path))
    card = json.loads(card_path.read_text())
    if "train_skills" not in card:
        raise EvaluationError(f"{card_path} does not say which skills it trains on (built by an older version)",
                              reason="dataset_without_skill_split", path=str(card_path))
    return set(card["train_skills"])


def held_out(task_skills: Iterable[str], trained: set[str], wanted: Sequence[str] | None) -> set[str]:
    """The skills to evaluate on: those named (none of them trained on), else every skill not trained on."""
    if wanted:
        leaked = sorted(set(wanted) & trained)
        if leaked:
            raise EvaluationError(f"the student was trained on {', '.join(leaked)}; evaluate it on held-out skills",
                                  reason="train_skill_in_evaluation", skills=leaked)
        return set(wanted)
    return set(task_skills) - trained


Outcomes = dict[bool, dict[str, bool]]  # skill provided -> task -> passed


def outcomes(results: Iterable[dict[str, Any]]) -> Outcomes:
    """Per skill condition, task -> passed; a task run several times counts as passed when any run did."""
    table: Outcomes = {}
    for result in results:
        runs = table.setdefault(bool(result["skill_provided"]), {})
        runs[result["task_id"]] = runs.get(result["task_id"], False) or bool(result["passed"])
    return table


def _paired(first: dict[str, bool], second: dict[str, bool], names: tuple[str, str]) -> dict[str, Any]:
    """McNemar's exact test over the tasks both sides ran."""
    tasks = sorted(set(first) & set(second))
    test = mcnemar_exact((first[t], second[t]) for t in tasks).to_dict()
    a, b = names
    return {"tasks": len(tasks), f"only_{a}": test["only_with"], f"only_{b}": test["only_without"],
            "both": test["both"], "neither": test["neither"], "p_value": test["p_value"]}


CONDITIONS = ((True, "with_skill"), (False, "without_skill"))


def comparisons(results_by_model: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per model and condition: pass rates, and with vs without the skill; then every later model
    against the first (the base) on the same tasks, per condition."""
    tables = {name: outcomes(results) for name, results in results_by_model.items()}
    report: dict[str, Any] = {"models": {}, "versus_base": {}}
    for name, table in tables.items():
        entry: dict[str, Any] = {}
        for condition, label in CONDITIONS:
            runs = list(table.get(condition, {}).values())
            if runs:
                entry[label] = {"tasks": len(runs), "passed": sum(runs), "pass_rate": sum(runs) / len(runs)}
        if True in table and False in table:
            entry["skill_contrast"] = _paired(table[True], table[False], ("with", "without"))
        report["models"][name] = entry
    base, *others = list(tables)
    for other in others:
        report["versus_base"][other] = {
            label: _paired(tables[other][condition], tables[base].get(condition, {}), (other, base))
            for condition, label in CONDITIONS if condition in tables[other]
        }
    return report
